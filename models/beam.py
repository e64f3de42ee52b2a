"""The bookkeeping of beam search: choosing each step's K best continuations, retiring the
sentences whose answer can no longer change, and reading the answers back at the end.

The decoder itself is driven by `decoding.beam_search`; everything here works on NumPy arrays.

Two things keep a step cheap without changing a single choice:
- The K best of the K * V continuations of a sentence are found among a few hundred candidates
  per hypothesis, not among all V words (see `_candidates`); a sentence where that shortcut
  could be wrong (a tie, too few finite scores) is recomputed the exhaustive way.
- A sentence leaves the batch (and the key/value cache) as soon as its answer is fixed: when all
  its K hypotheses have ended, or when its best ended hypothesis beats anything the others can
  still reach (see `Beams.retire`).
"""
from __future__ import annotations

import numpy as np

GROUPS = 128  # words are scanned in this many interleaved groups for the candidate shortcut


def length_penalty(length, alpha):
    """GNMT's ((5 + length) / 6) ** alpha: divides log-probabilities so short outputs don't win."""
    return ((5.0 + length) / 6.0) ** alpha


def _top_k(x, k):
    """Indices of each row's k largest values, largest first, ties to the lower index: the same
    as a stable argsort of -x cut to k, but a partition does the O(n) work and only k are sorted."""
    if k >= x.shape[1]:
        return np.argsort(-x, axis=1, kind="stable")[:, :k]
    part = np.argpartition(-x, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(x, part, axis=1)
    order = np.lexsort((part, -vals), axis=1)  # by value, then index
    top = np.take_along_axis(part, order, axis=1)
    # a tie across the k-th place may have been cut at a higher index: redo those rows exactly
    kth = vals.min(axis=1, keepdims=True)
    tied = (x >= kth).sum(axis=1) > k
    if tied.any():
        top[tied] = np.argsort(-x[tied], axis=1, kind="stable")[:, :k]
    return top


def _candidates(logp, k, groups):
    """The words worth scoring for each hypothesis: (columns (R, M), sorted, and bound (R,), the
    largest log-probability among the words left out), or (None, None) to score all V.

    Word v belongs to group v % groups (a strided view, so the group maxima cost one pass). The
    k groups with the largest maxima hold the row's k best words (ties aside: `Beams._select`
    checks), and every word elsewhere is at most the largest maximum of the other groups."""
    R, V = logp.shape
    n = V // groups
    if groups <= k or n < 2:
        return None, None
    gmax = logp[:, :n * groups].reshape(R, n, groups).max(axis=1)  # (R, groups)
    order = np.argpartition(-gmax, k, axis=1)
    bound = np.take_along_axis(gmax, order[:, k:k + 1], axis=1)[:, 0]
    cols = (np.arange(n)[None, :, None] * groups + order[:, None, :k]).reshape(R, n * k)
    tail = np.broadcast_to(np.arange(n * groups, V), (R, V - n * groups))
    cols = np.concatenate([cols, tail], axis=1)
    cols.sort(axis=1)  # in word order, so that ties still go to the lower index
    return cols, bound


class Beams:
    """The K hypotheses of each live sentence: log-probabilities `scores` (B', K), `finished` and
    `lengths` (tokens up to and including <eos>), and the back-pointers of every step.

    Rows: at each step the decoder reads B' * K rows, sentence-major. Sentences that retire
    leave; `keep` records which rows went on, so the answers can be traced back at the end."""

    def __init__(self, B, K, max_len, alpha, eos_id, pad_id, groups=None):
        self.B, self.K, self.max_len, self.alpha = B, K, max_len, alpha
        self.eos_id, self.pad_id = eos_id, pad_id
        self.groups = GROUPS if groups is None else groups
        self.alive = np.arange(B)                       # the sentences still open
        self.scores = np.full((B, K), -np.inf)
        self.scores[:, 0] = 0.0  # all beams start identical: only one may expand at step 1
        self.finished = np.zeros((B, K), dtype=bool)
        self.lengths = np.zeros((B, K), dtype=np.int64)
        # the best penalty any future length can get: bounds what a live hypothesis can reach
        pen = length_penalty(np.arange(max_len + 1), alpha)
        self.best_pen = np.maximum.accumulate(pen[::-1])[::-1]  # max of pen[t:max_len + 1]
        self.steps = []                                 # (tokens, parents, attention, keep)
        self.done_step = np.zeros(B, dtype=np.int64)
        self.done_row = np.zeros(B, dtype=np.int64)     # the chosen row at done_step
        self.best = np.full(B, -np.inf)                 # the chosen hypothesis' final score
        # retiring early relies on log-probabilities <= 0, as log_softmax gives: checked anyway
        self.rising = False  # whether one above 0 was seen

    def advance(self, logp, step, attn):
        """Pick every live sentence's K best continuations from log-probabilities (B' * K, V) of
        the next token; returns (new tokens, parent row of each) as (B' * K,) arrays."""
        Bl, K = self.scores.shape
        logp[:, self.pad_id] = -np.inf  # padding is never a word to generate
        pen = length_penalty(np.where(self.finished, self.lengths, step), self.alpha)  # (B', K)
        beam, tok, scores = self._select(logp, pen, step)
        index = (np.arange(Bl)[:, None] * K + beam).reshape(-1)
        was_finished = np.take_along_axis(self.finished, beam, axis=1)
        self.lengths = np.where(was_finished, np.take_along_axis(self.lengths, beam, axis=1), step)
        self.finished = was_finished | (tok == self.eos_id)
        self.scores = scores
        self.steps.append([tok.reshape(-1), index, attn, None])
        return tok.reshape(-1), index

    def _select(self, logp, pen, step):
        """(beam, token, score) of each sentence's K best continuations, (B', K) each, ranked by
        score / pen with ties to the lower (beam, token): exactly what scoring all K * V would
        give."""
        Bl, K = self.scores.shape
        V = logp.shape[1]
        cols, bound = _candidates(logp, K, self.groups)
        if cols is None:
            self.rising |= bool(logp.max(initial=-np.inf) > 0)
            return _select_all(logp.reshape(Bl, K, V), self.scores, self.finished, pen, self.pad_id)
        M = cols.shape[1]
        vals = np.take_along_axis(logp, cols, axis=1)  # each row's maximum is among them
        self.rising |= bool(vals.max(initial=-np.inf) > 0)
        fin = self.finished.reshape(-1)
        s = self.scores.reshape(-1, 1)
        cand = np.where(fin[:, None], -np.inf, s + vals)
        # a finished hypothesis may only extend itself with padding, at no cost
        cand = np.concatenate([cand, np.where(fin, s[:, 0] + 0.0, -np.inf)[:, None]], axis=1)
        cols = np.concatenate([cols, np.full((len(cols), 1), self.pad_id)], axis=1)
        keys = (cand / pen.reshape(-1, 1)).reshape(Bl, K * (M + 1))
        top = _top_k(keys, K)
        kth = np.take_along_axis(keys, top[:, -1:], axis=1)[:, 0]
        # the shortcut is exact where the K-th pick beats every word left out, strictly
        left_out = np.where(fin, -np.inf, (s[:, 0] + bound) / pen.reshape(-1)).reshape(Bl, K)
        beam, col = top // (M + 1), top % (M + 1)
        rows = np.arange(Bl)[:, None] * K + beam
        tok = cols[rows, col]
        scores = cand.reshape(Bl, K * (M + 1))[np.arange(Bl)[:, None], top]
        redo = ~(kth > left_out.max(axis=1))
        if redo.any():
            r = np.flatnonzero(redo)
            beam[r], tok[r], scores[r] = _select_all(
                logp.reshape(Bl, K, V)[r], self.scores[r], self.finished[r], pen[r], self.pad_id)
        return beam, tok, scores

    def retire(self, step):
        """Retire the sentences whose answer is fixed after `step`; returns the rows (into this
        step's B' * K) that go on, or None if all do.

        Fixed means: every hypothesis has ended, or the best ended one scores above the best
        that any live one could reach (its log-probability only falls and its length penalty is
        at most the largest still to come), so it can neither be pushed out of the beam nor
        beaten at the end."""
        pen = length_penalty(np.maximum(self.lengths, 1), self.alpha)
        final = np.where(self.finished, self.scores / pen, -np.inf)
        done = self.finished.all(1)
        if step == self.max_len:
            done[:] = True
            final = self.scores / pen  # a hypothesis cut at max_len competes as it is
        elif not self.rising:  # the bound needs scores that never rise
            reach = np.where(self.finished, -np.inf, self.scores / self.best_pen[step + 1])
            done |= final.max(1) > reach.max(1)
        if not done.any():
            return None
        d = np.flatnonzero(done)
        pick = final[d].argmax(1)
        b = self.alive[d]
        self.done_step[b], self.done_row[b] = step, d * self.K + pick
        self.best[b] = final[d, pick]
        live = np.flatnonzero(~done)
        self.alive = self.alive[live]
        self.scores, self.finished, self.lengths = (a[live] for a in
                                                    (self.scores, self.finished, self.lengths))
        keep = (live[:, None] * self.K + np.arange(self.K)).reshape(-1)
        self.steps[-1][3] = keep
        return keep

    def answers(self):
        """Each sentence's chosen hypothesis: (tokens (B, T), cross-attention per decoder layer
        (B, H, T, S), scores (B,)) for the T steps taken; padding after a sentence retired."""
        B = self.B
        out = np.full((B, len(self.steps)), self.pad_id, dtype=np.int64)
        cross = None
        row = np.full(B, -1)
        for i in range(len(self.steps) - 1, -1, -1):
            tokens, parents, attn, _ = self.steps[i]
            joins = self.done_step == i + 1
            row[joins] = self.done_row[joins]
            on = np.flatnonzero(row >= 0)
            if cross is None:
                cross = [np.zeros((B, a.shape[1], len(self.steps), a.shape[2]), a.dtype)
                         for a in attn]
            out[on, i] = tokens[row[on]]
            prow = parents[row[on]]  # the hypothesis this token extended
            for c, a in zip(cross, attn):
                c[on, :, i] = a[prow]  # attention of the step that produced the token
            if i > 0:
                keep = self.steps[i - 1][3]
                row[on] = prow if keep is None else keep[prow]
        return out, cross, self.best


def _select_all(logp, scores, finished, pen, pad_id):
    """`Beams._select` the exhaustive way: score all K * V continuations of each sentence.
    logp (B, K, V), scores (B, K), finished (B, K), pen (B, K)."""
    B, K, V = logp.shape
    # a finished hypothesis may only extend itself with padding, at no cost
    logp = np.where(finished[:, :, None], -np.inf, logp)
    logp[:, :, pad_id] = np.where(finished, 0.0, -np.inf)
    cand = scores[:, :, None] + logp                                   # (B, K, V)
    best = _top_k((cand / pen[:, :, None]).reshape(B, K * V), K)
    return best // V, best % V, np.take_along_axis(cand.reshape(B, K * V), best, axis=1)
