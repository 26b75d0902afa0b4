"""A training script written against the README's Python API, for `mypy --strict`: the package
ships type hints (py.typed and a stub with one typed keyword per option)."""
from typing import Any, Dict, List

import torch
from torch.utils.data import DataLoader

import shardkit


def train(path: str, valid: str) -> float:
    model = torch.nn.Linear(64, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with shardkit.Loader(path, batch_size=32, seed=1, shuffle=True, threads=2,
                         cache_dir="/tmp/cache", mlm_probability=None) as loader:
        for epoch in range(3):
            for batch in loader:
                logits = model(batch["input_ids"].float())
                loss = torch.nn.functional.cross_entropy(logits, batch["labels"])
                optimizer.zero_grad()
                # torch 1.13 leaves backward() untyped.
                loss.backward()  # type: ignore[no-untyped-call]
                optimizer.step()
            state: Dict[str, Any] = loader.state_dict()
            loader.load_state_dict(state)
            fetched: int = loader.io_stats()["bytes_fetched"]
    mixture = shardkit.Loader([shardkit.Source(path, weight=3), shardkit.Source(valid, weight=1)],
                              batch_size=16, source_field=True)
    steps: int = len(mixture)
    sources, options = shardkit.read_mixture("mix.json")
    shardkit.Loader(sources, **options)
    ds = shardkit.Dataset(valid, read_mode="pread")
    names: List[str] = [f["name"] for f in ds.schema]
    dl = DataLoader(shardkit.IterableDataset(path, batch_size=32, epoch=0), batch_size=None)
    for batch in dl:
        pass
    summary = shardkit.write_dataset([{"text": "a b", "label": "pos"}], "out", task="cls",
                                     tokenizer="vocab.txt", labels=["neg", "pos"], max_len=64,
                                     on_error="skip", threads=2)
    print(shardkit.__version__, names, steps, summary["records"])
    try:
        shardkit.Loader(path, batch_size=0)
    except shardkit.OptionError as e:
        print(e)
    return float(len(ds))
