#!/usr/bin/python3
"""Dumps a SentencePiece .model (protobuf ModelProto, read by python3-sentencepiece's own
sentencepiece_model_pb2 and python3-protobuf) as JSON for spm_to_tokenizer_json.js.
usage: /usr/bin/python3 spm_dump.py MODEL.model OUT.json"""
import base64
import json
import sys

from sentencepiece import sentencepiece_model_pb2 as pb

m = pb.ModelProto()
with open(sys.argv[1], "rb") as f:
    m.ParseFromString(f.read())
types = {1: "NORMAL", 2: "UNKNOWN", 3: "CONTROL", 4: "USER_DEFINED", 5: "UNUSED", 6: "BYTE"}
out = {
    "model_type": pb.TrainerSpec.ModelType.Name(m.trainer_spec.model_type),
    "byte_fallback": m.trainer_spec.byte_fallback,
    "unk_id": m.trainer_spec.unk_id,
    "pieces": [[p.piece, p.score, types[p.type]] for p in m.pieces],
    "normalizer": {
        "name": m.normalizer_spec.name,
        "precompiled_charsmap": base64.b64encode(m.normalizer_spec.precompiled_charsmap).decode(),
        "add_dummy_prefix": m.normalizer_spec.add_dummy_prefix,
        "remove_extra_whitespaces": m.normalizer_spec.remove_extra_whitespaces,
        "escape_whitespaces": m.normalizer_spec.escape_whitespaces,
    },
}
with open(sys.argv[2], "w") as f:
    json.dump(out, f)
