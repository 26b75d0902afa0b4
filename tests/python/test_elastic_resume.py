"""Elastic resume, checked against an independent model of the order written from the loader
README's arithmetic ("Resume at any world size and batch size").

The epoch's global order (which sample each position holds) comes from `shard-inspect order` at
world size 1; everything a topology changes is computed here: the cut into global steps of
world_size x batch_size positions, each rank's run of them, the last step's padding or drop,
where max_tokens ends the epoch (from each record's length, read with shardkit.Dataset), and
what a run resumed from samples_consumed = k reads. A run is saved at several steps at each of
(1, 64), (2, 32), (4, 16), (3, 20), (8, 8) and resumed at every other pair, over a plain dataset
(with MLM masks), the same with drop_last, a three-source mixture whose weights follow a schedule
in tokens, packed documents and a max_tokens budget. Every rank of every run must read exactly
what the model says, and the model's resumed reads must be the saved run's unread positions: none
lost, none read twice, in order. The scheduled mixture's shares stay within one sample of the
schedule's integral at every prefix of 100,000 samples.

The nodes plan ("Nodes: each reads its share"): its order is checked against the README's
partition arithmetic (slices of the permuted block sequence in slot order, windows of m records,
odd slots backwards; the block sequence read from the rows plan at one block a window, which
permutes blocks alike), and its split against the reading groups: runs saved at each of seven
topologies (nodes x ranks per node x batch) are resumed at every other, with MLM masks and with
drop_last; each node's blocks are its own partitions' (shares overlapping in at most nodes - 1
blocks), as `shard-inspect order --blocks` prints them; a state of the other plan, a mixture and
max_tokens are refused.
"""
import json
import math
import os
import subprocess
import sys
from collections import defaultdict
from fractions import Fraction

sys.path.insert(0, os.path.dirname(__file__))
import pyutil  # noqa: E402
import shardkit  # noqa: E402

PAIRS = [(1, 64), (2, 32), (4, 16), (3, 20), (8, 8)]
WINDOW = 4  # window_blocks, given so that the order does not depend on the memory budget


def ceil_div(a, b):
    return -(-a // b)


# ---- the model (loader README, "Resume at any world size and batch size") ----

def rank_positions(k, end, world, batch, drop_last):
    """Per rank, per batch, the positions a run from position k to the epoch's end reads."""
    step = world * batch
    full, rest = divmod(end - k, step)
    ranks = [[[k + j * step + r * batch + i for i in range(batch)] for j in range(full)]
             for r in range(world)]
    if rest and not drop_last:
        per_rank = ceil_div(rest, world)
        first = k + full * step
        for r in range(world):
            # Past the end, positions wrap to the epoch's first ones.
            ranks[r].append([p if p < end else p % end
                             for p in range(first + r * per_rank, first + (r + 1) * per_rank)])
    return ranks


def read_positions(k, end, world, batch, drop_last):
    """The positions a run from k reads, step by step (every rank's rows of a step in rank
    order), without the padding of a last short step."""
    ranks = rank_positions(k, end, world, batch, drop_last)
    out = []
    for j in range(len(ranks[0])):
        for r in range(world):
            out.extend(ranks[r][j])
    return out[:end - k] if len(out) > end - k else out


def budget_end(lengths, budget):
    """The position after the one whose tokens reach the budget (or the epoch's size)."""
    total = 0
    for p, n in enumerate(lengths):
        total += n
        if total >= budget:
            return p + 1
    return len(lengths)


# ---- the nodes plan (loader README, "Nodes: each reads its share") ----

PARTITIONS = 16  # canonical partitions of the nodes scenarios (the default is 64)
# (nodes, ranks per node, batch size): rank-local (the world size divides 16), node-local
# (16 x 2 ranks: 2 ranks share a group), and 3 nodes, which do not divide 16 (rows split). The
# steps of 54 and 20 positions save states that do not start a step of the others' groups.
TOPOLOGIES = [(1, 1, 64), (4, 2, 8), (2, 4, 8), (8, 1, 8), (16, 2, 2), (3, 2, 9), (2, 2, 5)]


def prime_factors(n):
    out, f = [], 2
    while n > 1:
        if f * f > n:
            f = n
        if n % f:
            f += 1
            continue
        out.append(f)
        n //= f
    return out


def partition_slot(c, partitions):
    """c's digits over the prime factors of C, smallest first (least significant first), read in
    reverse order."""
    slot, scale = 0, partitions
    for f in prime_factors(partitions):
        scale //= f
        slot += (c % f) * scale
        c //= f
    return slot


def slices(n, partitions):
    """Each partition's (first offset in the block sequence, records): floor(n / C), one more for
    c < n mod C, laid out in slot order."""
    q, r0 = divmod(n, partitions)
    size = [q + (c < r0) for c in range(partitions)]
    start, at = [0] * partitions, 0
    for c in sorted(range(partitions), key=lambda c: partition_slot(c, partitions)):
        start[c], at = at, at + size[c]
    return start, size


def reading_group(rank, world, per_node, partitions):
    """(groups g, this rank's group, its member index)."""
    nodes = world // per_node
    node, local = divmod(rank, per_node)
    node_groups = math.gcd(nodes, partitions)
    if node_groups < nodes:
        return node_groups, node % node_groups, node // node_groups * per_node + local
    within = math.gcd(per_node, partitions // nodes)
    return nodes * within, node + nodes * (local % within), local // within


def node_rank_positions(k, end, nodes, per_node, batch, drop_last, partitions, wrap=True):
    """Per rank, per batch, the positions a run from k reads: each step's positions go to group
    p mod g, a group's positions in order are cut into runs of the batch, one per member (past
    the end, wrapped to the epoch's first positions unless `wrap` is false)."""
    world = nodes * per_node
    step = world * batch
    full, rest = divmod(end - k, step)
    ranks = []
    for r in range(world):
        g, group, member = reading_group(r, world, per_node, partitions)

        def run(first, size):
            offset = (group - first) % g
            return [first + offset + g * (member * size + j) for j in range(size)]
        batches = [run(k + j * step, batch) for j in range(full)]
        if rest and not drop_last:
            tail = run(k + full * step, ceil_div(rest, world))
            batches.append([p if p < end or not wrap else p % end for p in tail])
        ranks.append(batches)
    return ranks


def geometry(path):
    """Per record, its block (from the manifest: records_per_block, each shard's records)."""
    with open(os.path.join(path, "manifest.json")) as f:
        m = json.load(f)
    per_block, block_of, block = m["records_per_block"], [], 0
    for shard in m["shards"]:
        for i in range(shard["records"]):
            block_of.append(block + i // per_block)
        block += ceil_div(shard["records"], per_block)
    return per_block, block_of


def block_sequence(path, seed, block_of):
    """The epoch's records in its permuted block order, each block's records ascending. The
    nodes plan permutes blocks as the rows plan does, and at window_blocks 1 a rows window is
    one block: its records come together, the blocks in that permuted order."""
    out = subprocess.run([pyutil.INSPECT, "order", path, "--seed", str(seed), "--world-size", "1",
                          "--batch-size", "100000", "--window-blocks", "1"],
                         check=True, capture_output=True, text=True).stdout.split()
    seen, blocks = set(), []
    for r in map(int, out):
        if block_of[r] not in seen:
            seen.add(block_of[r])
            blocks.append(block_of[r])
    members = defaultdict(list)
    for r, b in enumerate(block_of):
        members[b].append(r)
    return [r for b in blocks for r in members[b]]


def check_partitioned_order(order, sequence, window_records, partitions):
    """Position p holds partition c = p mod C's t-th record, t = p div C, in its window
    t div m: the window's records are the slice's (read backwards at an odd slot)."""
    start, size = slices(len(sequence), partitions)
    windows = defaultdict(list)
    for p, (_, record) in enumerate(order):
        c, t = p % partitions, p // partitions
        windows[(c, t // window_records)].append(record)
    for (c, w), records in windows.items():
        lo, hi = w * window_records, min(size[c], (w + 1) * window_records)
        index = range(lo, hi)
        if partition_slot(c, partitions) % 2:
            index = [size[c] - 1 - i for i in index]
        assert sorted(records) == sorted(sequence[start[c] + i] for i in index), (c, w)
    assert sum(len(v) for v in windows.values()) == len(sequence)


def check_node_shares(sc, nodes, per_node, batch):
    """Each node reads the blocks of its own partitions: at a power-of-two node count dividing C
    the nodes' shares overlap in at most nodes - 1 blocks; each rank reads only its group's
    partitions. Returns each node's blocks."""
    world = nodes * per_node
    ranks = node_rank_positions(0, sc.end, nodes, per_node, batch, sc.drop_last, PARTITIONS,
                                wrap=False)
    shares = [set() for _ in range(nodes)]  # with a last short step's padding rows
    own = [set() for _ in range(nodes)]
    for r, batches in enumerate(ranks):
        g, group, _ = reading_group(r, world, per_node, PARTITIONS)
        for p in (p for b in batches for p in b):
            block = sc.block_of[sc.order[p % sc.end][1]]
            shares[r // per_node].add(block)
            if p < sc.end:  # padding rows read the epoch's first positions, anyone's
                assert p % g == group
                if PARTITIONS % nodes == 0:
                    assert p % PARTITIONS % nodes == r // per_node
                own[r // per_node].add(block)
    blocks = len(set(sc.block_of))
    if PARTITIONS % nodes == 0 and nodes & (nodes - 1) == 0:
        assert sum(map(len, own)) <= blocks + nodes - 1, (nodes, list(map(len, own)))
    return shares


# ---- orders, lengths and runs ----

def global_order(target, options):
    """(source, record) at every position of epoch 0, from `shard-inspect order` at world 1."""
    args = [pyutil.INSPECT, "order", "--world-size", "1", "--batch-size", "100000",
            "--window-blocks", str(WINDOW)]
    if options.get("partition") == "nodes":
        args += ["--partition", "nodes", "--partitions", str(options["partitions"])]
    args += ["--mixture", target] if target.endswith(".json") else [target, "--seed",
                                                                     str(options["seed"])]
    if options.get("max_samples"):
        args += ["--max-samples", str(options["max_samples"])]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout.split()
    values = list(map(int, out))
    if target.endswith(".json"):
        return list(zip(values[0::2], values[1::2]))
    return [(0, r) for r in values]


def record_lengths(paths, order):
    datasets = [shardkit.Dataset(p) for p in paths]
    cache = {}
    lengths = []
    for s, r in order:
        if (s, r) not in cache:
            cache[(s, r)] = int(datasets[s][r]["length"])
        lengths.append(cache[(s, r)])
    return lengths


class Scenario:
    def __init__(self, name, sources, options, spec=None, check_rows=None, budget=None):
        self.name, self.sources, self.options = name, sources, options
        self.spec, self.check_rows, self.budget = spec, check_rows, budget
        paths = [s if isinstance(s, str) else s.path for s in sources]
        self.order = global_order(spec or paths[0], options)
        self.lengths = record_lengths(paths, self.order) if budget else None
        self.end = budget_end(self.lengths, budget) if budget else len(self.order)
        self.drop_last = options.get("drop_last", False)

    def loaders(self, world, batch, state=None):
        ranks = []
        for r in range(world):
            loader = shardkit.Loader(self.sources, batch_size=batch, rank=r, world_size=world,
                                     window_blocks=WINDOW, threads=1, **self.options)
            if state is not None:
                loader.load_state_dict(state)
            ranks.append(loader)
        return ranks

    def run(self, world, batch, state=None):
        """Every rank's (source, record) per batch, and the state after each global step."""
        ranks = self.loaders(world, batch, state)
        got, states = [[] for _ in range(world)], []
        while True:
            items = [loader.next_with_sources() for loader in ranks]
            if items[0] is None:
                assert all(i is None for i in items), f"{self.name}: ranks ended apart"
                return got, states
            for r, (tensors, pairs) in enumerate(items):
                if self.check_rows:
                    self.check_rows(tensors, pairs)
                got[r].append(pairs)
            rank_states = [loader.state_dict() for loader in ranks]
            assert all(s == rank_states[0] for s in rank_states), rank_states
            states.append(rank_states[0])

    def expected(self, k, world, batch):
        return [[[self.order[p] for p in b] for b in rank]
                for rank in rank_positions(k, self.end, world, batch, self.drop_last)]

    def tokens_before(self, k):
        return sum(self.lengths[:k]) if self.lengths else 0


def check_scenario(sc):
    resumes = 0
    for world, batch in PAIRS:
        got, states = sc.run(world, batch)
        assert got == sc.expected(0, world, batch), f"{sc.name}: the run at {world}x{batch}"
        steps = len(states)
        saved_at = sorted({1, steps // 3, (2 * steps) // 3, steps - 2} - {0})
        for step in saved_at:
            state = states[step - 1]
            k = state["samples_consumed"]
            assert k == step * world * batch, (sc.name, k, step)
            if sc.budget:
                assert state["tokens_consumed"] == sc.tokens_before(k), sc.name
            for world2, batch2 in PAIRS:
                if (world2, batch2) == (world, batch):
                    continue
                resumed, end_states = sc.run(world2, batch2, state)
                assert resumed == sc.expected(k, world2, batch2), (
                    f"{sc.name}: saved at {world}x{batch} step {step}, resumed at "
                    f"{world2}x{batch2}")
                # The model's claim: the saved run read positions [0, k), the resumed one the
                # rest, in order, none twice (drop_last: but its own last short step).
                rest = read_positions(k, sc.end, world2, batch2, sc.drop_last)
                kept = sc.end - k - ((sc.end - k) % (world2 * batch2) if sc.drop_last else 0)
                assert rest == list(range(k, k + kept)), sc.name
                if end_states:  # an epoch read to its end (or its budget) says it is over
                    assert end_states[-1]["samples_consumed"] == len(sc.order), sc.name
                if sc.spec or sc.budget:
                    check_cli(sc, state, world2, batch2, resumed)
                resumes += 1
    return resumes


class NodesScenario(Scenario):
    """A dataset read under partition="nodes" over PARTITIONS partitions, whose order is checked
    against the README's partition arithmetic before any run."""

    def __init__(self, name, path, options, check_rows=None):
        options = dict(options, partition="nodes", partitions=PARTITIONS)
        super().__init__(name, [path], options, check_rows=check_rows)
        self.per_node = 1
        self.per_block, self.block_of = geometry(path)
        sequence = block_sequence(path, options["seed"], self.block_of)
        if WINDOW >= len(set(self.block_of)):
            window_records = ceil_div(len(sequence), PARTITIONS)
        else:
            window_records = max(1, WINDOW // PARTITIONS) * self.per_block
        check_partitioned_order(self.order, sequence, window_records, PARTITIONS)

    def loaders(self, world, batch, state=None):
        ranks = []
        for r in range(world):
            loader = shardkit.Loader(self.sources, batch_size=batch, rank=r, world_size=world,
                                     ranks_per_node=self.per_node, window_blocks=WINDOW,
                                     threads=1, **self.options)
            if state is not None:
                loader.load_state_dict(state)
            ranks.append(loader)
        return ranks

    def run_at(self, nodes, per_node, batch, state=None):
        self.per_node = per_node
        return self.run(nodes * per_node, batch, state)

    def expected_at(self, k, nodes, per_node, batch):
        return [[[self.order[p] for p in b] for b in rank] for rank in
                node_rank_positions(k, self.end, nodes, per_node, batch, self.drop_last,
                                    PARTITIONS)]


def check_steps_cover(ranks, k, end, step, drop_last):
    """The model's claim: step j of a run from k reads positions k + j x step .. (all ranks,
    padding of a last short step aside), none twice; with drop_last, all but the remainder."""
    read = []
    for j in range(len(ranks[0])):
        first = k + j * step
        got = sorted(p for rank in ranks for p in rank[j] if p >= first)  # wrapped rows aside
        assert got == list(range(first, min(end, first + step))), j
        read.extend(got)
    kept = end - k - ((end - k) % step if drop_last else 0)
    assert read == list(range(k, k + kept))


def check_nodes_scenario(sc):
    resumes = 0
    for nodes, per_node, batch in TOPOLOGIES:
        check_node_shares(sc, nodes, per_node, batch)
        check_cli_blocks(sc, nodes, per_node)
        got, states = sc.run_at(nodes, per_node, batch)
        assert got == sc.expected_at(0, nodes, per_node, batch), (
            f"{sc.name}: the run at {nodes} nodes x {per_node}, batch {batch}")
        steps = len(states)
        for step in sorted({steps // 3, (2 * steps) // 3} - {0}):
            state = states[step - 1]
            k = state["samples_consumed"]
            assert k == step * nodes * per_node * batch and state["fingerprint"].endswith(
                f"-nodes{PARTITIONS}"), state
            for nodes2, per_node2, batch2 in TOPOLOGIES:
                if (nodes2, per_node2, batch2) == (nodes, per_node, batch):
                    continue
                resumed, end_states = sc.run_at(nodes2, per_node2, batch2, state)
                assert resumed == sc.expected_at(k, nodes2, per_node2, batch2), (
                    f"{sc.name}: saved at {nodes}x{per_node} batch {batch} step {step}, resumed "
                    f"at {nodes2}x{per_node2} batch {batch2}")
                check_steps_cover(node_rank_positions(k, sc.end, nodes2, per_node2, batch2,
                                                      sc.drop_last, PARTITIONS),
                                  k, sc.end, nodes2 * per_node2 * batch2, sc.drop_last)
                if end_states:
                    assert end_states[-1]["samples_consumed"] == len(sc.order), sc.name
                if step == steps // 3:
                    check_cli(sc, state, nodes2 * per_node2, batch2, resumed,
                              ["--partition", "nodes", "--partitions", str(PARTITIONS),
                               "--ranks-per-node", str(per_node2)])
                resumes += 1
    return resumes


def check_cli_blocks(sc, nodes, per_node):
    """`shard-inspect order --blocks` prints each node's blocks: the model's shares."""
    shares = check_node_shares(sc, nodes, per_node, 8)
    args = [pyutil.INSPECT, "order", sc.sources[0], "--blocks", "--seed", str(sc.options["seed"]),
            "--world-size", str(nodes * per_node), "--ranks-per-node", str(per_node),
            "--batch-size", "8", "--window-blocks", str(WINDOW), "--partition", "nodes",
            "--partitions", str(PARTITIONS)]
    if sc.drop_last:
        args.append("--drop-last")
    printed = [set() for _ in range(nodes)]
    for line in subprocess.run(args, check=True, capture_output=True,
                               text=True).stdout.splitlines():
        if not line.startswith("#"):
            v = list(map(int, line.split()))
            printed[v[0]].update(v[2:])
    assert printed == shares, f"{sc.name}: shard-inspect order --blocks at {nodes}x{per_node}"


def check_cli(sc, state, world, batch, resumed, extra=()):
    """`shard-inspect order --resume-from` prints what each rank of the resumed run read."""
    path = os.path.join(WORK, "state.json")
    with open(path, "w") as f:
        json.dump(state, f)
    args = [pyutil.INSPECT, "order", "--resume-from", path, "--world-size", str(world),
            "--batch-size", str(batch), "--window-blocks", str(WINDOW)]
    args += ["--mixture", sc.spec] if sc.spec else [sc.sources[0]]
    if sc.budget:
        args += ["--max-tokens", str(sc.budget)]
    if sc.drop_last:
        args.append("--drop-last")
    args += list(extra)
    lines = subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()
    assert lines[0].startswith("#"), lines[0]
    printed = [[[] for _ in resumed[r]] for r in range(world)]
    for line in lines[1:]:
        v = list(map(int, line.split()))
        printed[v[0]][v[1]].append((v[2], v[3]) if sc.spec else (0, v[2]))
    assert printed == resumed, f"{sc.name}: shard-inspect order --resume-from"


# ---- what rows must hold whatever the topology ----

class SameRows:
    """MLM masks are keyed by record: a record's masked ids and labels are the same in every
    run, whatever batch it lands in."""

    def __init__(self):
        self.rows = {}

    def __call__(self, tensors, pairs):
        for i, key in enumerate(pairs):
            n = int(tensors["attention_mask"][i].sum())
            row = (tensors["input_ids"][i][:n].tolist(), tensors["labels"][i][:n].tolist())
            assert self.rows.setdefault(key, row) == row, f"record {key} masked differently"


def document_positions(separator):
    """position_ids restart after each separator, from each row's real tokens."""
    def check(tensors, pairs):
        for i in range(len(pairs)):
            ids = tensors["input_ids"][i].tolist()
            n = int(tensors["attention_mask"][i].sum())
            want, p = [], 0
            for j in range(len(ids)):
                want.append(p if j < n else 0)
                p = 0 if ids[j] == separator else p + 1
            assert tensors["position_ids"][i].tolist() == want, pairs[i]
    return check


def check_schedule_prefixes(spec, row_tokens):
    """Counts within one sample of the schedule's integral at every prefix of 100,000 samples,
    the integral computed here from the spec: shares normalised at each point, linear between,
    a point at T tokens being sample ceil(T / tokens per sample)."""
    with open(spec) as f:
        s = json.load(f)
    points = [(ceil_div(p["at_tokens"], row_tokens),
               [Fraction(w) / sum(map(Fraction, p["weights"])) for w in p["weights"]])
              for p in s["schedule"]]
    out = subprocess.run([pyutil.INSPECT, "order", "--mixture", spec, "--max-samples", "100000",
                          "--batch-size", "100000", "--window-blocks", str(WINDOW)],
                         check=True, capture_output=True, text=True).stdout.split()
    sources = list(map(int, out[0::2]))
    assert len(sources) == 100000
    n = len(points[0][1])

    def share_at(x):  # the share at sample position x (a Fraction), linear between points
        m = max(i for i, (at, _) in enumerate(points) if at <= x)
        if m + 1 == len(points):
            return points[m][1]
        (a, wa), (b, wb) = points[m], points[m + 1]
        t = (x - a) / Fraction(b - a)
        return [u + (v - u) * t for u, v in zip(wa, wb)]

    counts, integral = [0] * n, [0.0] * n
    worst = 0.0
    for k, src in enumerate(sources):
        counts[src] += 1
        middle = share_at(Fraction(2 * k + 1, 2))  # exact for a linear piece
        for i in range(n):
            integral[i] += float(middle[i])
            worst = max(worst, abs(counts[i] - integral[i]))
    assert worst < 1 + 1e-4, worst
    # --shares: each window's counts are those of the order.
    lines = subprocess.run([pyutil.INSPECT, "order", "--mixture", spec, "--max-samples", "100000",
                            "--batch-size", "100", "--shares", "100", "--window-blocks",
                            str(WINDOW)], check=True, capture_output=True, text=True).stdout
    for line, first in zip(lines.splitlines(), range(0, 100000, 10000)):
        words = line.split()
        window = sources[first:first + 10000]
        assert [int(c) for c in words[words.index("counts") + 1:][:n]] == \
            [window.count(i) for i in range(n)], line
    return worst


def check_state_identity(a, b):
    """A state continues only the stream it was saved from: another dataset or seed is refused
    naming both; a state saved before fingerprints (none in it) is taken, its seed adopted."""
    loader = shardkit.Loader(a, batch_size=8, seed=1, window_blocks=WINDOW)
    loader.next_with_records()
    state = loader.state_dict()
    for path, seed, named in [(b, 1, state["fingerprint"]), (a, 2, "seed 1")]:
        other = shardkit.Loader(path, batch_size=8, seed=seed, window_blocks=WINDOW)
        try:
            other.load_state_dict(state)
        except shardkit.ShardkitError as e:
            assert named in str(e), str(e)
            if path == b:
                assert other.state_dict()["fingerprint"] in str(e), str(e)
        else:
            raise AssertionError(f"a state of {a} seed 1 was loaded into {path} seed {seed}")
    legacy = {k: v for k, v in state.items() if k in ("seed", "epoch", "samples_consumed")}
    other = shardkit.Loader(a, batch_size=8, seed=7, window_blocks=WINDOW)
    other.load_state_dict(legacy)
    assert other.state_dict()["seed"] == 1


def check_plan_identity(a, spec):
    """A state continues only under its own plan: the other is refused naming both; a state
    saved before fingerprints (a rows state) is refused by a nodes loader; what the nodes plan
    cannot partition (a mixture, max_tokens) is refused saying why."""
    def refused(make, *named):
        try:
            make()
        except shardkit.ShardkitError as e:
            for text in named:
                assert text in str(e), (text, str(e))
        else:
            raise AssertionError(f"not refused: {named}")
    rows = shardkit.Loader(a, batch_size=8, seed=1, window_blocks=WINDOW)
    rows.next_with_records()
    state = rows.state_dict()
    nodes = shardkit.Loader(a, batch_size=8, seed=1, window_blocks=WINDOW, partition="nodes")
    refused(lambda: nodes.load_state_dict(state), "partition='rows'", "partition='nodes' over 64")
    legacy = {k: v for k, v in state.items() if k in ("seed", "epoch", "samples_consumed")}
    refused(lambda: nodes.load_state_dict(legacy), "no fingerprint", "partition='rows'")
    nodes.next_with_records()
    refused(lambda: rows.load_state_dict(nodes.state_dict()), "partition='nodes' over 64",
            "partition='rows'")
    # A checkpoint before the first batch (an IterableDataset not iterated yet) carries the
    # plan's fingerprint: it resumes under nodes, and is refused over other data.
    options = dict(batch_size=8, seed=1, window_blocks=WINDOW, partition="nodes")
    fresh = shardkit.IterableDataset(a, **options).state_dict()
    assert fresh["fingerprint"].endswith("nodes64"), fresh
    resumed = shardkit.IterableDataset(a, **options)
    resumed.load_state_dict(fresh)
    assert [b["input_ids"].tolist() for b in resumed] == [
        b["input_ids"].tolist() for b in shardkit.Loader(a, **options)]
    other, _ = pyutil.dataset(1500, seed=9)
    refused(lambda: shardkit.Loader(other, **options).load_state_dict(fresh), "other data")
    sources, options = shardkit.read_mixture(spec)
    refused(lambda: shardkit.Loader(sources, partition="nodes", **options), "mixes 3")
    refused(lambda: shardkit.Loader(a, partition="nodes", max_tokens=1000), "max_tokens")
    refused(lambda: shardkit.Loader(a, partition="nodes", rank=0, world_size=6, ranks_per_node=4),
            "ranks_per_node 4 does not divide world_size 6")


def lm_dataset(n, seed):
    tmp = pyutil.scratch("shardkit-lm-")
    corpus = os.path.join(tmp, "lm.jsonl")
    words = "the a of river stone light cold warm north road seven quiet".split()
    with open(corpus, "w") as f:
        for i in range(n):
            k = 3 + (i * 7 + seed) % 40
            f.write(json.dumps({"text": " ".join(words[(i + j) % len(words)] for j in range(k))})
                    + "\n")
    out = os.path.join(tmp, "lm")
    subprocess.run([pyutil.SHARDIFY, "--input", corpus, "--task", "lm", "--tokenizer",
                    pyutil.VOCAB, "--text-field", "text", "--max-len", "32", "--block-size",
                    "2048", "--shard-size", "20000", "--out", out, "--force"],
                   check=True, capture_output=True)
    return out


def main():
    global WORK
    WORK = pyutil.scratch("shardkit-elastic-")
    a, _ = pyutil.dataset(1500, seed=1)
    b, _ = pyutil.dataset(500, seed=2)
    c, _ = pyutil.dataset(300, seed=3)
    row_tokens = shardkit.Dataset(a).schema[0]["shape"][0]
    spec = os.path.join(WORK, "mix.json")
    with open(spec, "w") as f:
        json.dump({"seed": 11, "max_samples": 1600, "interpolation": "linear",
                   "sources": [{"path": a}, {"path": b}, {"path": c}],
                   "schedule": [{"at_tokens": 0, "weights": [0.6, 0.3, 0.1]},
                                {"at_tokens": 300 * row_tokens, "weights": [0.6, 0.3, 0.1]},
                                {"at_tokens": 1100 * row_tokens, "weights": [0.1, 0.3, 0.6]}]},
                  f)
    sources, spec_options = shardkit.read_mixture(spec)
    lm = lm_dataset(1200, 5)
    separator = shardkit.Dataset(lm).info["task"]["separator_id"]
    packed_rows = len(shardkit.Dataset(lm))
    assert packed_rows > 300, packed_rows
    total_tokens = sum(int(shardkit.Dataset(a)[i]["length"]) for i in range(1500))
    scenarios = [
        Scenario("plain + MLM", [a], {"seed": 3, "mlm_probability": 0.15, "fields": ["input_ids"]},
                 check_rows=SameRows()),
        Scenario("plain, drop_last", [a], {"seed": 4, "drop_last": True}),
        Scenario("scheduled 3-source mixture", sources, spec_options, spec=spec),
        Scenario("packed documents, drop_last", [lm],
                 {"seed": 5, "drop_last": True, "document_positions": True},
                 check_rows=document_positions(separator)),
        Scenario("max_tokens", [a], {"seed": 6, "max_tokens": total_tokens * 3 // 5,
                                     "include_metadata": True}, budget=total_tokens * 3 // 5),
    ]
    nodes_scenarios = [
        NodesScenario("nodes plan + MLM", a,
                      {"seed": 7, "mlm_probability": 0.15, "fields": ["input_ids"]},
                      check_rows=SameRows()),
        NodesScenario("nodes plan, drop_last", a, {"seed": 8, "drop_last": True}),
    ]
    check_state_identity(a, b)
    check_plan_identity(a, spec)
    node_resumes = sum(check_nodes_scenario(sc) for sc in nodes_scenarios)
    print(f"nodes plan: {node_resumes} resumes exact over {len(TOPOLOGIES)} topologies")
    resumes = sum(check_scenario(sc) for sc in scenarios)
    worst = check_schedule_prefixes(spec, row_tokens)
    print(f"{resumes} resumes exact over {len(scenarios)} scenarios; schedule within "
          f"{worst:.4f} samples of its integral over 100,000 samples")


if __name__ == "__main__":
    main()
