"""Mistakes the stub must catch: each line below is a type error under mypy --strict."""
import shardkit

shardkit.Loader("data", batch_size="32")
shardkit.Loader("data", shufle=True)
shardkit.write_dataset([], "out", tokenizer="t.json", on_error="ignore")
shardkit.Dataset("data", read_mode=3)
n: str = len(shardkit.Dataset("data"))
shardkit.Loader("data", 64)  # DataLoader(ds, 64) means a batch size; here it was the epoch
