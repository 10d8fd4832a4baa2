"""Byte-pair merges learned from a text's chunks: the training half of :class:`~seqlab.text.BPETokenizer`.

Training keeps pair counts and, for every pair, the set of distinct chunks it occurs in; a merge
rewrites only those chunks and adjusts the counts by the pairs it removes and creates, instead of
recounting the corpus.
"""
from __future__ import annotations

from collections import Counter, defaultdict

__all__ = ["learn_merges", "merge_pair"]


def learn_merges(chunk_freq: Counter, vocab_size: int) -> tuple[dict[tuple[int, int], int], list[bytes]]:
    """``(merges, token_bytes)`` for a vocabulary of up to ``vocab_size`` tokens from ``{chunk: count}``.

    ``merges`` maps each merged pair of ids to its new id (256 on, in the order learned), ``token_bytes``
    holds the bytes of every token; merges never cross a chunk.
    """
    words = [list(c.encode("utf-8")) for c in chunk_freq]
    freqs = list(chunk_freq.values())
    pair_counts: Counter = Counter()
    where: dict[tuple[int, int], set[int]] = defaultdict(set)
    for w, (ids, f) in enumerate(zip(words, freqs)):
        for pair in zip(ids, ids[1:]):
            pair_counts[pair] += f
            where[pair].add(w)
    merges, token_bytes = {}, [bytes([i]) for i in range(256)]
    for new_id in range(256, vocab_size):
        if not pair_counts:
            break  # every chunk is a single token already
        # most frequent pair; ties go to the smallest pair so the result is deterministic
        best = max(pair_counts.items(), key=lambda kv: (kv[1], (-kv[0][0], -kv[0][1])))[0]
        if pair_counts[best] < 1:
            break
        merges[best] = new_id
        token_bytes.append(token_bytes[best[0]] + token_bytes[best[1]])
        for w in list(where.pop(best, ())):
            ids, f = words[w], freqs[w]
            for pair in zip(ids, ids[1:]):  # retract this chunk's old pairs
                pair_counts[pair] -= f
                if pair_counts[pair] <= 0:
                    del pair_counts[pair]
            merged = merge_pair(ids, best, new_id)
            words[w] = merged
            for pair in zip(merged, merged[1:]):
                pair_counts[pair] += f
                where[pair].add(w)
        pair_counts.pop(best, None)
    return merges, token_bytes


def merge_pair(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """``ids`` with every non-overlapping occurrence of ``pair``, left to right, replaced by ``new_id``."""
    out, i, n = [], 0, len(ids)
    while i < n:
        if i < n - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out
