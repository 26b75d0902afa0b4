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

Limits (serve()): each conversation's rendering is bounded in bytes and in seconds, and the
process in memory; a template that goes past them, or raises anything at all, makes that one
conversation an error, and the process goes on with the next.
"""
import datetime
import json
import math
import re
import resource
import signal
import sys
import time

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
        # The length of blocks[:counted], carried from call to call: summing every block at each
        # turn made a conversation of n turns cost n^2 (16,000 turns: 40 s).
        self.counted = self.length = 0

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_mark"), [], [], body).set_lineno(lineno)

    def _mark(self, caller):
        text = caller()
        if self.spans is not None:
            while self.counted < len(self.blocks):
                self.length += len(self.blocks[self.counted])
                self.counted += 1
            self.spans.append((self.length, self.length + len(text)))
        return text


class RenderLimitError(Exception):
    """The rendering went past a limit of serve(): its bytes or its time."""


class TurnSpanError(ValueError):
    """Where an assistant turn starts cannot be found in a template without {% generation %}."""


class _Timeout(BaseException):
    """Raised by SIGALRM inside a rendering; a BaseException, so that no ``except Exception`` in
    the path (a template's own or Jinja's) swallows it."""


class _BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox with ``*`` and ``**`` checked before they run: a string or list repeated, or a
    power, that would exceed ``max_chars`` is refused instead of being built in C, where neither
    the time limit nor Ctrl-C reaches (``'x' * 10**10``, ``10 ** 10 ** 9``)."""
    intercepted_binops = frozenset(["*", "**"])
    max_chars = None

    def call_binop(self, context, operator, left, right):
        limit = self.max_chars
        if limit is not None:
            if operator == "*":
                for seq, n in ((left, right), (right, left)):
                    if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and \
                            len(seq) * n > limit:
                        raise RenderLimitError(f"the template repeats a sequence of {len(seq)} "
                                               f"items {n} times, past the limit of {limit} "
                                               f"(--max-render-bytes)")
            elif operator == "**" and isinstance(left, int) and isinstance(right, int) and \
                    right > 0 and abs(left) > 1 and right * math.log2(abs(left)) > 8 * limit:
                raise RenderLimitError(f"the template computes {left} ** {right}, a number of "
                                       f"more than {limit} bytes (--max-render-bytes)")
        return super().call_binop(context, operator, left, right)


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
    """The length of the common prefix of a and b, by halving: comparisons of slices run in C, a
    loop over the characters of a 50 MB conversation would take seconds."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while hi - lo > 1:  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


class ChatTemplate:
    """The chat template of one tokenizer_config.json (a dict, as json.load gives it)."""

    def __init__(self, config, name=None, max_chars=None):
        """max_chars: a rendering longer than this raises RenderLimitError (None: no limit)."""
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
        self.max_chars = max_chars
        env = _BoundedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                  extensions=[_GenerationSpans, jinja2.ext.loopcontrols])
        env.max_chars = max_chars
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
        return "".join(self._generate(messages, add_generation_prompt, []))

    def _generate(self, messages, add_generation_prompt, blocks):
        """The rendering's blocks, appended to `blocks` as Jinja yields them, stopped as soon as
        they exceed max_chars."""
        size, limit = 0, self.max_chars
        for block in self._template.generate(messages=messages,
                                             add_generation_prompt=add_generation_prompt,
                                             **self.special_tokens):
            size += len(block)
            if limit is not None and size > limit:
                # Characters are at least as many as UTF-8 bytes: past the limit either way.
                raise RenderLimitError(f"the rendered conversation exceeds {limit} bytes "
                                       f"(--max-render-bytes)")
            blocks.append(block)
        return blocks

    def _render_tracked(self, messages):
        blocks, spans = [], []
        self._tracker.blocks, self._tracker.spans = blocks, spans
        self._tracker.counted = self._tracker.length = 0
        try:
            self._generate(messages, False, blocks)
        finally:
            self._tracker.blocks = self._tracker.spans = None
        return "".join(blocks), spans

    def assistant_spans(self, messages, which="all"):
        """(text, spans): the rendered conversation and the [start, end) character spans of its
        assistant turns; which="last" gives only the last one, "none" none."""
        if which == "none":
            return self.render(messages), []
        turns = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
        if self.has_generation:
            text, spans = self._render_tracked(messages)
            if which == "last" and turns:
                # Every block of the last assistant message: those its rendering adds.
                last = turns[-1]
                spans = spans[len(self._render_tracked(messages[:last])[1]) if last else 0:]
            return text, spans
        text = self.render(messages)
        if which == "last":
            turns = turns[-1:]
        return text, [self._turn_span(text, messages, i) for i in turns]

    def _turn_span(self, text, messages, i):
        """The span of assistant message i in the rendering `text` of every message: what follows
        the rendering of messages[:i] with the generation prompt, to the first special token."""
        before = self.render(messages[:i], add_generation_prompt=True)
        start = _common_prefix(text, before)
        # A generation prompt may open a turn otherwise than a finished turn opens (DeepSeek-R1's
        # ends in "<think>\n"): the turn starts where they part. But a template that moves or
        # drops earlier messages (Mistral's puts the system message in the last user turn, and
        # drops it when an assistant turn ends the conversation) hides where it starts.
        earlier = self.render(messages[:i]) if start < len(before) else ""
        parted = _common_prefix(text, earlier)
        if parted < len(earlier):
            raise TurnSpanError(
                f"the messages before assistant message {i} render differently on their own "
                f"(from character {parted}: {text[parted:parted + 40]!r} in the conversation, "
                f"{earlier[parted:parted + 40]!r} alone), so where that turn starts is unknown; "
                f"use a template that marks assistant turns with {{% generation %}}")
        match = self._special.search(text, start) if self._special else None
        end = match.end() if match else _common_prefix(text, self.render(messages[:i + 1]))
        return start, max(start, end)


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


class _Limits:
    """What serve() allows one conversation: max_bytes of UTF-8 text, `seconds` of wall time (a
    SIGALRM interrupts the rendering), and an address space of what the process holds plus room
    for a few copies of the largest text it may build (RLIMIT_AS: a template that allocates
    past it gets a MemoryError, not the machine's memory)."""

    HEADROOM = 256 << 20
    COPIES = 16  # the input, its messages, each rendering, the text, its JSON: measured 7-10x

    def __init__(self, max_bytes, seconds):
        self.max_bytes, self.seconds = max_bytes, seconds
        self._base = None
        self._armed = False
        if seconds is not None:
            signal.signal(signal.SIGALRM, self._expired)

    def _expired(self, signum, frame):
        if self._armed:
            raise _Timeout()

    @staticmethod
    def _address_space():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
        return 0

    def run(self, line, work):
        """work(line) under the limits; a _Timeout or MemoryError passes out."""
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if self.max_bytes is not None:
            if self._base is None:
                self._base = self._address_space()
            room = self._base + self.HEADROOM + self.COPIES * max(self.max_bytes, len(line))
            resource.setrlimit(resource.RLIMIT_AS,
                               (room if hard == resource.RLIM_INFINITY else min(room, hard), hard))
        try:
            if self.seconds is not None:
                self._armed = True
                signal.setitimer(signal.ITIMER_REAL, self.seconds)
            try:
                return work(line)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                self._armed = False  # a SIGALRM handled from here on raises nothing
        finally:
            # Reading the next line, however long, is not the template's doing.
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def serve(config_path, which, stdin=sys.stdin.buffer, stdout=sys.stdout.buffer, max_bytes=None,
          seconds=None):
    """The coprocess. It first writes {"ready": true, "generation": bool} (or {"error": why} and
    returns 1 when the config cannot be used); then each input line is a JSON array of messages;
    each output line is {"text": rendered, "spans": [[start, end], ...]} with UTF-8 byte offsets,
    or {"error": why} for a conversation that cannot be rendered: whatever the template raises,
    a rendering of more than max_bytes bytes, or one that takes more than `seconds`. Lines stay
    in order.

    Input is read as it arrives, and replies go out together: after the last line read so far,
    or once 50 ms have passed since the last write (so that shardify, which waits for each reply
    a little longer than `seconds`, hears from a renderer that is busy). A write per reply woke
    shardify once per conversation."""
    def encode(reply):
        return json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n"

    def send(replies):
        stdout.write(b"".join(replies))
        stdout.flush()
        replies.clear()

    def render(line):
        messages = json.loads(line)
        text, spans = template.assistant_spans(messages, which)
        data = text.encode("utf-8")  # a lone surrogate (an escaped \ud800) fails here
        if max_bytes is not None and len(data) > max_bytes:
            raise RenderLimitError(f"the rendered conversation exceeds {max_bytes} bytes "
                                   f"(--max-render-bytes)")
        del data
        return encode({"text": text, "spans": _byte_offsets(text, spans)})

    def reply_to(line):
        try:
            return limits.run(line, render)
        except _Timeout:
            why = f"rendering took longer than {seconds:g} s (--render-timeout)"
        except (RenderLimitError, TurnSpanError) as e:
            why = str(e)
        except MemoryError:
            why = "rendering ran out of the memory allowed to it"
        except Exception as e:  # noqa: BLE001: whatever a template raises is this row's error
            why = f"{type(e).__name__}: {e}"
        return encode({"error": "chat template: " + why})

    def load(path):
        with open(path, encoding="utf-8") as f:
            return ChatTemplate(json.load(f), max_chars=max_bytes)

    # Jinja folds constant expressions when it compiles ('%0999999999d' % 1): under the limits.
    limits = _Limits(max_bytes, seconds)
    try:
        template = limits.run(config_path, load)
    except _Timeout:
        return send([encode({"error": f"{config_path}: compiling the chat template took longer "
                                      f"than {seconds:g} s"})]) or 1
    except Exception as e:  # noqa: BLE001: a template that cannot be compiled is unusable
        send([encode({"error": f"{config_path}: {type(e).__name__}: {e}"})])
        return 1
    send([encode({"ready": True, "generation": template.has_generation})])
    pending = bytearray()
    replies, sent_at = [], time.monotonic()
    while True:
        data = stdin.read1(1 << 16)
        if not data:
            break
        pending += data
        if b"\n" not in data:
            continue
        lines = pending.split(b"\n")
        pending = bytearray(lines.pop())
        del data
        for line in lines:
            replies.append(reply_to(line))
            if time.monotonic() - sent_at >= 0.05:
                send(replies)
                sent_at = time.monotonic()
        del lines
        if replies:
            send(replies)
            sent_at = time.monotonic()
    if pending.strip():
        send([reply_to(bytes(pending))])
    return 0


def _main(argv):
    usage = ("usage: chat_template.py --serve tokenizer_config.json all|last|none "
             "[MAX_BYTES SECONDS]\n")
    if len(argv) not in (4, 6) or argv[1] != "--serve" or argv[3] not in ("all", "last", "none"):
        sys.stderr.write(usage)
        return 2
    max_bytes = seconds = None
    if len(argv) == 6:
        max_bytes, seconds = int(argv[4]), float(argv[5])
    return serve(argv[2], argv[3], max_bytes=max_bytes, seconds=seconds)


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
