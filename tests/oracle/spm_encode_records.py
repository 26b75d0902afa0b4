#!/usr/bin/python3
"""Encodes each record of a UTF-8 file (each record ends with U+001E) with SentencePiece's own
encoder (python3-sentencepiece) and writes one JSON array of ids a line. Unlike spm_encode, which
reads lines, a record may hold newlines.
usage: /usr/bin/python3 spm_encode_records.py MODEL.model INPUT OUTPUT"""
import json
import sys

import sentencepiece

processor = sentencepiece.SentencePieceProcessor(model_file=sys.argv[1])
with open(sys.argv[2], encoding="utf-8", newline="") as f:
    records = f.read().split("\x1e")
if records and records[-1] == "":
    records.pop()
with open(sys.argv[3], "w", encoding="utf-8") as out:
    for record in records:
        out.write(json.dumps(processor.encode(record)) + "\n")
