"""Chat templates of HF tokenizer_config.json files, rendered with Jinja as HF transformers renders
them, with the character span of every assistant turn.

This file is the one renderer of shardkit: `shardify --task sft --chat-template` runs it as a
coprocess (``python3 chat_template.py --serve CONFIG``, one JSON line in, one out; see serve()),
and Python code imports it (``from shardkit.chat_template import ChatTemplate``). It needs only
the standard library and jinja2 (Debian's python3-jinja2), so the coprocess starts without torch
or the compiled module.

The environment is configured as transformers configures it: an ImmutableSandboxedEnvironment with
trim_blocks and lstrip_blocks, the loopcontrols extension, a ``{% generation %}`` block tag that
records the character span of what it renders, ``raise_exception``, ``strftime_now`` and a
``tojson`` filter that does not escape HTML or non-ASCII characters. The template sees
``messages``, ``add_generation_prompt`` and the tokenizer's special tokens by name (``bos_token``,
``eos_token``, ...), as apply_chat_template passes them.

Assistant spans (format/SPEC.md, "SFT records"): a template with ``{% generation %}`` marks them
itself. Otherwise the span of assistant message i is what a model writes after the generation
prompt: it starts where the rendered conversation departs from the rendering of messages[:i] with
add_generation_prompt=True, and ends after the first special token (an added token flagged
special in tokenizer_config.json: ``<|im_end|>``, ``<|eot_id|>``, ``<end_of_turn>``) at or after
that start; a template that writes no special token there ends the span where the conversation
departs from the rendering of messages[:i+1].
"""
import datetime
import json
import re
import sys

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

_GENERATION_TAG = re.compile(r"\{%-?\s*generation\s*-?%\}")
_SPECIAL_TOKEN_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                        "cls_token", "mask_token")


class _GenerationSpans(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}``: renders its body and, while a list is attached,
    appends the body's (start, end) character span in the output."""
    tags = {"generation"}

    def __init__(self, environment):
        super().__init__(environment)
        self.blocks = None
        self.spans = None

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_mark"), [], [], body).set_lineno(lineno)

    def _mark(self, caller):
        text = caller()
        if self.spans is not None:
            start = sum(len(b) for b in self.blocks)
            self.spans.append((start, start + len(text)))
        return text


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _strftime_now(fmt):
    return datetime.datetime.now().strftime(fmt)


def _token_text(value):
    """A special token as tokenizer_config.json writes it: a string or an AddedToken object."""
    if isinstance(value, dict):
        return value.get("content")
    return value


def _common_prefix(a, b):
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class ChatTemplate:
    """The chat template of one tokenizer_config.json (a dict, as json.load gives it)."""

    def __init__(self, config, name=None):
        template = config.get("chat_template")
        if isinstance(template, list):  # named templates: [{"name": ..., "template": ...}]
            named = {t["name"]: t["template"] for t in template}
            key = name or "default"
            if key not in named:
                raise ValueError(f"tokenizer_config.json has no chat template named '{key}' "
                                 f"(it has {', '.join(sorted(named))})")
            template = named[key]
        if not isinstance(template, str) or not template:
            raise ValueError("tokenizer_config.json has no chat_template")
        self.source = template
        self.has_generation = bool(_GENERATION_TAG.search(template))
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                            extensions=[_GenerationSpans, jinja2.ext.loopcontrols])
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise_exception
        env.globals["strftime_now"] = _strftime_now
        self._tracker = env.extensions[_GenerationSpans.identifier]
        self._template = env.from_string(template)
        self.special_tokens = {}
        for key in _SPECIAL_TOKEN_NAMES:
            text = _token_text(config.get(key))
            if text is not None:
                self.special_tokens[key] = text
        extra = config.get("additional_special_tokens")
        if extra is not None:
            self.special_tokens["additional_special_tokens"] = [_token_text(t) for t in extra]
        specials = {_token_text(t) for t in config.get("added_tokens_decoder", {}).values()
                    if isinstance(t, dict) and t.get("special")}
        specials.update(v for k, v in self.special_tokens.items() if k != "additional_special_tokens")
        specials.discard(None)
        specials.discard("")
        # Longest first, so that a token that extends another is found whole.
        self._special = (re.compile("|".join(re.escape(s) for s in sorted(specials, key=len,
                                                                           reverse=True)))
                         if specials else None)

    def render(self, messages, add_generation_prompt=False):
        return self._template.render(messages=messages, add_generation_prompt=add_generation_prompt,
                                     **self.special_tokens)

    def _render_tracked(self, messages):
        blocks, spans = [], []
        self._tracker.blocks, self._tracker.spans = blocks, spans
        try:
            for block in self._template.generate(messages=messages, add_generation_prompt=False,
                                                 **self.special_tokens):
                blocks.append(block)
        finally:
            self._tracker.blocks = self._tracker.spans = None
        return "".join(blocks), spans

    def assistant_spans(self, messages, which="all"):
        """(text, spans): the rendered conversation and the [start, end) character spans of its
        assistant turns; which="last" gives only the last one, "none" none."""
        if which == "none":
            return self.render(messages), []
        if self.has_generation:
            text, spans = self._render_tracked(messages)
            return text, spans[-1:] if which == "last" else spans
        text = self.render(messages)
        turns = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
        if which == "last":
            turns = turns[-1:]
        spans = []
        for i in turns:
            start = _common_prefix(text, self.render(messages[:i], add_generation_prompt=True))
            match = self._special.search(text, start) if self._special else None
            if match:
                end = match.end()
            else:
                end = _common_prefix(text, self.render(messages[:i + 1]))
            spans.append((start, max(start, end)))
        return text, spans


def _byte_offsets(text, spans):
    """Character spans as UTF-8 byte spans of text."""
    if text.isascii():
        return [list(s) for s in spans]
    cuts = sorted({c for s in spans for c in s})
    at, pos, prev = {}, 0, 0
    for c in cuts:
        pos += len(text[prev:c].encode("utf-8"))
        at[c] = pos
        prev = c
    return [[at[a], at[b]] for a, b in spans]


def serve(config_path, which, stdin=sys.stdin.buffer, stdout=sys.stdout.buffer):
    """The coprocess. It first writes {"ready": true, "generation": bool} (or {"error": why} and
    returns 1 when the config cannot be used); then each input line is a JSON array of messages;
    each output line is {"text": rendered, "spans": [[start, end], ...]} with UTF-8 byte offsets,
    or {"error": why} for a conversation that cannot be rendered. Lines stay in order.

    Input is read as it arrives, and the replies to all the lines of one read go out in one
    write: shardify sends a chunk's conversations at once, and a write per reply woke it once per
    conversation."""
    def encode(reply):
        return json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n"

    def send(replies):
        stdout.write(b"".join(replies))
        stdout.flush()

    def reply_to(line):
        try:
            messages = json.loads(line)
            text, spans = template.assistant_spans(messages, which)
            reply = {"text": text, "spans": _byte_offsets(text, spans)}
            reply["text"].encode("utf-8")  # a lone surrogate (an escaped \ud800) fails here
        except (jinja2.exceptions.TemplateError, TypeError, ValueError, KeyError, IndexError,
                AttributeError) as e:
            reply = {"error": f"chat template: {type(e).__name__}: {e}"}
        return encode(reply)

    try:
        with open(config_path, encoding="utf-8") as f:
            template = ChatTemplate(json.load(f))
    except (OSError, ValueError, jinja2.exceptions.TemplateError) as e:
        send([encode({"error": f"{config_path}: {e}"})])
        return 1
    send([encode({"ready": True, "generation": template.has_generation})])
    pending = b""
    while True:
        data = stdin.read1(1 << 16)
        if not data:
            break
        lines = (pending + data).split(b"\n")
        pending = lines.pop()
        if lines:
            send([reply_to(line) for line in lines])
    if pending.strip():
        send([reply_to(pending)])
    return 0


def _main(argv):
    if len(argv) != 4 or argv[1] != "--serve" or argv[3] not in ("all", "last", "none"):
        sys.stderr.write("usage: chat_template.py --serve tokenizer_config.json all|last|none\n")
        return 2
    return serve(argv[2], argv[3])


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
