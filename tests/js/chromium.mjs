// Debian's Chromium driven by playwright-core (no downloaded browser): the flags that work on
// these machines, and a persistent profile so tests can restart the browser on the same data.
import { chromium } from "playwright-core";
import { existsSync } from "node:fs";

export const executablePath =
  process.env.CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);

const FLAGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function launch(profile, { extension } = {}) {
  const args = [...FLAGS];
  if (extension) args.push(`--disable-extensions-except=${extension}`, `--load-extension=${extension}`);
  return chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args,
    ignoreDefaultArgs: extension ? ["--disable-extensions"] : [],
  });
}
