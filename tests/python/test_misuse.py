"""Misuse is refused with an error that names what is wrong, never a crash or a silent default:
an absurd thread count, threads the system cannot start, NaN as a probability, a value of the
wrong type, a misspelt keyword, a state that is not one; and the command line's habits: a
misspelt flag or subcommand gets a did-you-mean, `dump --decode` refuses a tokenizer other than
the dataset's, and a classification corpus without the label field says which field it read and
what the rows have."""
import json
import os
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402


def refused(call, kind, *words):
    try:
        call()
    except kind as e:
        for w in words:
            assert w in str(e), f"{w!r} not in {str(e)!r}"
        return str(e)
    raise AssertionError(f"accepted: expected {kind.__name__} with {words}")


def test_loader_keywords(path):
    refused(lambda: shardkit.Loader(path, threads=5000), shardkit.OptionError,
            "threads", "from 0 to 1024", "5000")
    refused(lambda: shardkit.Loader(path, mlm_probability=float("nan")), ValueError,
            "mlm_probability", "nan")
    refused(lambda: shardkit.Loader(path, batch_size="32"), TypeError,
            "batch_size must be an int, not str")
    refused(lambda: shardkit.Loader(path, shuffle="yes"), TypeError, "shuffle must be a bool")
    refused(lambda: shardkit.Loader(path, fields="input_ids", cache_dir=3), TypeError,
            "cache_dir must be a str or os.PathLike, not int")
    refused(lambda: shardkit.Loader(path, batchsize=32), TypeError, "did you mean 'batch_size'")
    refused(lambda: shardkit.Dataset(path, read_mode="fast"), shardkit.OptionError,
            "read_mode must be one of pread, mmap, not 'fast'")
    refused(lambda: shardkit.Loader(path, batch_size=0), shardkit.OptionError,
            "batch_size must be from 1 to 18446744073709551615, not 0")
    refused(lambda: shardkit.Loader(path, epoch=-1), shardkit.OptionError,
            "epoch must be from 0 to 18446744073709551615, not -1")
    refused(lambda: shardkit.Loader(path).set_epoch(-3), shardkit.OptionError,
            "epoch must be from 0 to 18446744073709551615, not -3")
    refused(lambda: shardkit.Loader(path, epoch=2**64), shardkit.OptionError,
            "epoch must be from 0 to 18446744073709551615, not 18446744073709551616")
    last = shardkit.Loader(path, epoch=2**64 - 1)
    for _ in last:
        pass
    refused(lambda: next(iter(last)), shardkit.ShardkitError, "was the last one")
    refused(lambda: shardkit.Loader(path, epoch=1.5), TypeError, "epoch must be an int, not float")
    refused(lambda: shardkit.Dataset(path)[1.5], TypeError, "float")
    # Any sequence the type stub's Sequence admits, not only lists and tuples.
    assert shardkit.Loader(path, special_ids=range(3)).epoch == 0
    refused(lambda: shardkit.Loader(path, special_ids=b"ab"), TypeError,
            "special_ids must be a list of int, not bytes")
    # Integers past 64 bits, and past int64 for a signed option: the value as given, and a true
    # range (2^63 once passed as int64's bound after rounding through a double, and wrapped).
    refused(lambda: shardkit.Loader(path, seed=2**64), shardkit.OptionError,
            "seed must be an integer within 64 bits, not 18446744073709551616")
    refused(lambda: shardkit.Loader(path, mask_token_id=-2**63 - 1), shardkit.OptionError,
            "not -9223372036854775809")
    refused(lambda: shardkit.Loader(path, mask_token_id=2**63), shardkit.OptionError,
            "to 9223372036854775807, not 9223372036854775808")
    print("  threads=5000, NaN, wrong types and a misspelling: each refused naming the option")


def test_mixture_values(path):
    """A source's weight/repeat/choose and a schedule's points: named when wrong, where the
    binding would only list the argument types it takes."""
    mix = [path, path]
    point = {"at_samples": 0, "weights": [1, 2]}
    refused(lambda: shardkit.Loader([shardkit.Source(path, choose=-5)]), shardkit.OptionError,
            "Source: choose must be a finite number, 0 or more, not -5")
    refused(lambda: shardkit.Source(path, choose=2.7), shardkit.OptionError,
            "choose must be a whole number")
    refused(lambda: shardkit.Source(path, weight="3"), TypeError,
            "Source: weight must be a number, not str")
    refused(lambda: shardkit.Loader([{"path": path, "repeat": float("inf")}]),
            shardkit.OptionError, "repeat must be a finite number")
    refused(lambda: shardkit.Loader(mix, schedule=[point], tokens_per_sample=-5),
            shardkit.OptionError, "tokens_per_sample")
    refused(lambda: shardkit.Loader(mix, schedule=[point, {"at_samples": 2**70,
                                                           "weights": [1, 2]}]),
            shardkit.OptionError, "schedule point 1: at_samples must be a whole number")
    refused(lambda: shardkit.Loader(mix, schedule=[{"at_samples": "0", "weights": [1, 2]}]),
            TypeError, "schedule point 0: at_samples must be a number, not str")
    refused(lambda: shardkit.Loader(mix, schedule=[{"at_samples": float("nan"),
                                                    "weights": [1, 2]}]),
            shardkit.OptionError, "at_samples must be a finite number")
    refused(lambda: shardkit.Loader(path, interpolation="linear"), shardkit.ShardkitError,
            "give schedule= too")
    # Sources that give no sample at all: refused as the mixture is made, naming repeat/choose.
    refused(lambda: shardkit.Loader([shardkit.Source(path, repeat=0),
                                     shardkit.Source(path, choose=0)]),
            shardkit.ShardkitError, "no source gives a sample", "repeat", "choose")
    print("  mixture values: bad weight, repeat, choose and schedule points named; no samples "
          "at all refused")


def test_state_that_is_not_one(path):
    # A dict that lacks a state's keys, or something else altogether: refused naming what is
    # missing and what a state holds, not a bare KeyError from inside.
    for make in (lambda: shardkit.Loader(path), lambda: shardkit.IterableDataset(path)):
        target = make()
        e = refused(lambda: target.load_state_dict({"seed": 1}), shardkit.ShardkitError,
                    "'epoch', 'samples_consumed'", "state_dict()", "tokens_consumed")
        assert "'seed'" not in e.split(":")[0], e
        refused(lambda: target.load_state_dict([1, 2]), shardkit.ShardkitError,
                "takes a dict, not list")
        target.load_state_dict(target.state_dict())  # a real one still resumes
    print("  load_state_dict of a state missing keys, or of a list: refused saying what it holds")


def test_dataloader_workers(path):
    """num_workers > 0 is refused with the error that says to use num_workers=0, under fork and
    spawn, also once state_dict() has made the loader (whose threads cannot be pickled). One
    worker is refused as two are: each worker refuses alone, and a spawned one imports torch."""
    from torch.utils.data import DataLoader
    for context in ("fork", "spawn"):
        for made in (False, True):
            ds = shardkit.IterableDataset(path, batch_size=8, seed=1)
            if made:
                ds.state_dict()
            workers = DataLoader(ds, batch_size=None, num_workers=1,
                                 multiprocessing_context=context, timeout=60)
            refused(lambda: next(iter(workers)), RuntimeError, "num_workers=0")
    # The dataset pickled with its loader's position: a copy continues where it was.
    import pickle
    ds = shardkit.IterableDataset(path, batch_size=8, seed=1)
    whole = [b["input_ids"].tolist() for b in DataLoader(ds, batch_size=None)]
    ds = shardkit.IterableDataset(path, batch_size=8, seed=1)
    it = iter(DataLoader(ds, batch_size=None))
    head = [next(it)["input_ids"].tolist() for _ in range(3)]
    copy = pickle.loads(pickle.dumps(ds))
    assert head + [b["input_ids"].tolist() for b in DataLoader(copy, batch_size=None)] == whole
    print("  DataLoader(num_workers=1), fork and spawn, before and after state_dict(): refused "
          "saying num_workers=0; a pickled copy continues the epoch")


def test_pickled_dataset_is_the_same_one(path, tmp):
    """A pickled Dataset (what spawn workers get) opens the dataset it was made on: a relative
    path as it resolved then, not in another cwd; and refuses one replaced since, whose records
    the parent's len() and indices do not describe. Before, both served the other dataset's
    records without an error."""
    import pickle
    import shutil
    other, _ = pyutil.dataset(n=350, seed=9)
    os.makedirs(os.path.join(tmp, "a"))
    os.makedirs(os.path.join(tmp, "b"))
    shutil.copytree(path, os.path.join(tmp, "a", "ds"))
    shutil.copytree(other, os.path.join(tmp, "b", "ds"))
    cwd = os.getcwd()
    try:
        os.chdir(os.path.join(tmp, "a"))
        ds = shardkit.Dataset("ds")
        first = ds[0]["input_ids"].tolist()
        pickled = pickle.dumps(ds)
        os.chdir(os.path.join(tmp, "b"))
        copy = pickle.loads(pickled)
        assert len(copy) == len(ds) == 300 and copy[0]["input_ids"].tolist() == first
        shutil.rmtree(os.path.join(tmp, "a", "ds"))
        shutil.copytree(other, os.path.join(tmp, "a", "ds"))
        refused(lambda: pickle.loads(pickled), shardkit.ShardkitError,
                "ds: the dataset there is not the one this Dataset was pickled from",
                "it was replaced since")
    finally:
        os.chdir(cwd)
    print("  a pickled Dataset opens where it was made, and refuses a dataset replaced since")


def test_exit_with_a_daemon_thread_reading(path):
    """The program ends while a daemon thread waits in the loader's next(): a clean exit. Before,
    the thread was ended by pthread_exit as it took the GIL back in a destructor, which aborted
    the process ("terminate called without an active exception", exit 134) in 10 runs of 10.
    The batches stay host arrays here: a torch tensor freed by such a thread can still abort in
    torch's own deleter (lib/loader/README.md)."""
    child = textwrap.dedent(f"""
        import threading, time, shardkit
        loader = shardkit.Loader({path!r}, batch_size=4, threads=2, window_blocks=2)
        raw = loader._loader  # the extension's loader: batches as host arrays, no tensors
        def read():
            epoch = 0
            while True:
                while raw.next() is not None:
                    pass
                epoch += 1
                raw.set_epoch(epoch)
        threading.Thread(target=read, daemon=True).start()
        time.sleep(0.3)
    """)
    for run in range(3):
        p = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0 and "terminate called" not in p.stderr, (run, p.returncode,
                                                                           p.stderr[-2000:])
    print("  three exits with a daemon thread in next(): exit 0 each")


def test_threads_the_system_cannot_start(path):
    # Under an address-space limit the threads' stacks do not fit: an error, not an abort.
    child = textwrap.dedent(f"""
        import resource, shardkit
        size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        limit = size + (256 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            shardkit.Loader({path!r}, threads=1000, memory_budget=1 << 20)
        except shardkit.ShardkitError as e:
            print("refused:", e)
        else:
            print("started")
    """)
    p = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}"
    assert p.stdout.startswith("refused:") and "cannot start loader thread" in p.stdout, p.stdout
    print("  1000 threads under a 256 MiB address-space margin: " + p.stdout.strip()[:90])


def test_a_budget_that_idles_threads_says_so(path):
    """A memory_budget too small for a batch per thread builds one batch at a time: said on
    stderr with the budget that keeps every thread building and the window_blocks that keeps
    the order. Following that advice is silent, and resumes the first run's state."""
    child = textwrap.dedent("""
        import json, sys, shardkit
        options = json.loads(sys.argv[2])
        loader = shardkit.Loader(sys.argv[1], batch_size=64, threads=4, seed=5, **options)
        rows = []
        while (taken := loader.next_with_records()) is not None:
            rows += taken[1]
        resumed = shardkit.Loader(sys.argv[1], batch_size=64, threads=4, seed=5, **options)
        resumed.load_state_dict(json.loads(sys.argv[3]))
        print(json.dumps([rows, loader.state_dict()["fingerprint"]]))
    """)

    def run(options, state=None):
        state = state or {"seed": 5, "epoch": 0, "samples_consumed": 0}
        p = subprocess.run([sys.executable, "-c", child, path, json.dumps(options),
                            json.dumps(state)], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr[-2000:]
        rows, fingerprint = json.loads(p.stdout)
        return rows, fingerprint, p.stderr

    rows, fingerprint, said = run({"memory_budget": 1 << 18})
    assert sorted(rows) == list(range(300)), rows  # every sample still comes, one batch a time
    assert "a quarter of memory_budget (256 KiB)" in said, said
    assert "so the 4 loader threads build only 1 batch(es) at a time" in said, said
    budget = said.split("a memory_budget of ")[1].split(" ")[:2]
    advised = int(budget[0]) << (20 if budget[1] == "MiB" else 10)
    window = int(said.split("with window_blocks=")[1].split(":")[0])
    state = {"seed": 5, "epoch": 0, "samples_consumed": 64, "fingerprint": fingerprint}
    same, same_fingerprint, said_again = run(
        {"memory_budget": advised, "window_blocks": window}, state)
    assert "shardkit:" not in said_again, said_again
    assert same == rows and same_fingerprint == fingerprint, "the advice changed the order"
    print(f"  memory_budget=256 KiB at 4 threads: said so; the advised {' '.join(budget)} with "
          f"window_blocks={window}: silent, the same order, the state resumes")


def test_cli_habits(path, tmp):
    p = subprocess.run([pyutil.SHARDIFY, "--input", "x", "--max-length", "256"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "did you mean --max-len" in p.stderr, p.stderr
    p = subprocess.run([pyutil.INSPECT, "inf", path], capture_output=True, text=True)
    assert p.returncode == 2 and "did you mean info" in p.stderr, p.stderr
    # dump --decode with another tokenizer: refused naming both, unless forced.
    tokenizers = os.path.dirname(pyutil.VOCAB)
    gpt2 = os.path.join(tokenizers, "gpt2.json")
    dump = [pyutil.INSPECT, "dump", path, "--count", "1", "--json", "--decode"]
    p = subprocess.run(dump + [gpt2], capture_output=True, text=True)
    assert p.returncode == 1 and "is not the tokenizer the dataset was made with" in p.stderr
    assert "wordpiece" in p.stderr and "bpe" in p.stderr, p.stderr
    forced = subprocess.run(dump + [gpt2, "--force-tokenizer"], capture_output=True, text=True)
    same = subprocess.run(dump + [pyutil.VOCAB], capture_output=True, text=True)
    assert forced.returncode == 0 and same.returncode == 0, forced.stderr + same.stderr
    assert json.loads(same.stdout)["text"] != json.loads(forced.stdout)["text"]
    # cls without the label field: the field read and what the rows hold.
    corpus = os.path.join(tmp, "reviews.jsonl")
    with open(corpus, "w") as f:
        for i in range(5):
            f.write(json.dumps({"body": f"review {i}", "sentiment": "pos"}) + "\n")
    p = subprocess.run([pyutil.SHARDIFY, "--input", corpus, "--task", "cls", "--tokenizer",
                        pyutil.VOCAB, "--text-field", "body", "--out", os.path.join(tmp, "r")],
                       capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    for words in ("'label'", "body, sentiment", "--label-field"):
        assert words in p.stderr, p.stderr
    print("  did-you-mean for --max-length and 'inf'; dump --decode gpt2.json on a BERT dataset "
          "refused, forced decodes otherwise; the cls error names 'label' and body, sentiment")


def main():
    path, _ = pyutil.dataset(n=300, seed=4)
    tmp = pyutil.scratch("shardkit-misuse-")
    test_loader_keywords(path)
    test_mixture_values(path)
    test_threads_the_system_cannot_start(path)
    test_a_budget_that_idles_threads_says_so(path)
    test_state_that_is_not_one(path)
    test_dataloader_workers(path)
    test_pickled_dataset_is_the_same_one(path, tmp)
    test_exit_with_a_daemon_thread_reading(path)
    test_cli_habits(path, tmp)
    print("misuse: all passed")


if __name__ == "__main__":
    main()
