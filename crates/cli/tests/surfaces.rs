//! Every operation of the registry (`mnemo_json::OPERATIONS`) on every surface: the JS package
//! (the wasm binding, `Mnemo`, `MnemoWorker`'s method list, the TypeScript types), the WIT
//! component, the command line `mnemo` and `mnemo-host` share, and the MCP server, which
//! leaves an operation out only with a written reason and offers the destructive ones only
//! with `--allow-destructive`. A new operation that misses a surface fails here.

use std::path::PathBuf;

use clap::{CommandFactory, Parser};
use mnemo_json::{Cli, Mcp, OPERATIONS};
use mnemo_tool::args::Command;

fn read(path: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `setRuleStatus` → `set_rule_status`.
fn snake(js: &str) -> String {
    js.chars()
        .flat_map(
            |c| {
                if c.is_ascii_uppercase() {
                    vec!['_', c.to_ascii_lowercase()]
                } else {
                    vec![c]
                }
            },
        )
        .collect()
}

/// The command line both tools share, as clap sees it.
#[derive(Parser)]
struct Shared {
    #[command(subcommand)]
    command: Command,
}

/// True when `words` ("fact set") is a command path of the shared command line.
fn has_command(words: &str) -> bool {
    let mut cmd = Shared::command();
    for w in words.split(' ') {
        match cmd.find_subcommand(w) {
            Some(sub) => cmd = sub.clone(),
            None => return false,
        }
    }
    true
}

#[test]
fn every_operation_is_on_every_surface() {
    let dts = read("pkg/src/index.d.ts");
    let core = read("pkg/src/core.js");
    let worker = read("pkg/src/worker/client.js");
    let binding = read("crates/js/src/js_engine.rs") + &read("crates/js/src/js_privacy.rs");
    let wit = read("wit/engine.wit");
    let mcp_source = read("crates/cli/src/mcp.rs");
    let (safe, all) = (mnemo_tool::mcp::tool_names(false), mnemo_tool::mcp::tool_names(true));
    let mut missing = Vec::new();
    for op in OPERATIONS {
        let js = op.js;
        let mut lack = |surface: &str, ok: bool| {
            if !ok {
                missing.push(format!("{} is not in {surface}", op.name));
            }
        };
        lack("index.d.ts", dts.contains(&format!("\n  {js}(")));
        lack(
            "core.js",
            core.contains(&format!("\n  {js}(")) || core.contains(&format!("\n  async {js}(")),
        );
        lack("MnemoWorker's METHODS", worker.contains(&format!("\"{js}\"")));
        let rust = binding.contains(&format!("js_name = {js})"))
            || binding.contains(&format!("pub fn {}(", snake(js)));
        lack("the wasm binding (crates/js)", rust);
        lack("wit/engine.wit", wit.contains(&format!("\n    {}: func(", op.wit)));
        match op.cli {
            Cli::Command(words) => {
                lack(&format!("the command line (`{words}`)"), has_command(words))
            }
            Cli::Omitted(why) => {
                assert!(why.len() > 30, "{}: say why the CLI leaves it out", op.name)
            }
        }
        match op.mcp {
            Mcp::Tool(t) => lack(&format!("MCP's tools ({t})"), safe.iter().any(|n| n == t)),
            Mcp::Destructive(t) => {
                lack(&format!("MCP's --allow-destructive tools ({t})"), all.iter().any(|n| n == t));
                assert!(!safe.iter().any(|n| n == t), "{t} is offered without --allow-destructive");
            }
            Mcp::Resource(uri) => {
                lack(&format!("MCP's resources ({uri})"), mcp_source.contains(uri))
            }
            Mcp::Omitted(why) => assert!(why.len() > 30, "{}: say why MCP leaves it out", op.name),
        }
    }
    assert!(missing.is_empty(), "{} gaps:\n{}", missing.len(), missing.join("\n"));
}

/// No surface has an operation the registry does not list (so none escapes this test).
#[test]
fn every_tool_and_function_is_in_the_registry() {
    let registered = |pick: &dyn Fn(&mnemo_json::Operation) -> Option<&'static str>, name: &str| {
        OPERATIONS.iter().filter_map(pick).any(|n| n == name)
    };
    for tool in mnemo_tool::mcp::tool_names(true) {
        let mcp_name = |op: &mnemo_json::Operation| match op.mcp {
            Mcp::Tool(t) | Mcp::Destructive(t) => Some(t),
            _ => None,
        };
        assert!(registered(&mcp_name, &tool), "MCP tool {tool} is not in mnemo_json::OPERATIONS");
    }
    // The component's host plumbing (storage, models, host services) is not an operation.
    let plumbing = [
        "configure",
        "load-model",
        "use-host-embedder",
        "embed",
        "use-host-llm",
        "use-host-tokenizer",
        "load",
    ];
    for line in read("wit/engine.wit").lines() {
        let Some((name, _)) = line.trim().split_once(": func(") else { continue };
        if plumbing.contains(&name) {
            continue;
        }
        assert!(
            registered(&|op| Some(op.wit), name),
            "WIT function {name} is not in mnemo_json::OPERATIONS"
        );
    }
}

/// Without the flag the server offers no tool that erases, rewrites, exports or changes what
/// the user taught; with it, those are added and nothing else changes.
#[test]
fn destructive_tools_need_the_flag() {
    let (safe, all) = (mnemo_tool::mcp::tool_names(false), mnemo_tool::mcp::tool_names(true));
    let destructive: Vec<&str> = mnemo_tool::mcp::destructive().collect();
    for name in ["forget", "feedback", "correct", "export", "rule_status", "episode_status"] {
        assert!(destructive.contains(&name), "{name} must need --allow-destructive");
    }
    let mut expected: Vec<String> =
        safe.iter().cloned().chain(destructive.iter().map(|s| s.to_string())).collect();
    expected.sort();
    expected.dedup();
    assert_eq!(all, expected);
    assert!(safe.iter().any(|t| t == "outcome"), "outcome is offered to every client");
}
