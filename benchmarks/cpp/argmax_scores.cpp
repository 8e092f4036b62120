/*
 * Name: argmax_scores
 * Category: cpp
 * Computes: the top kRounds entries of every query's row of scores, by repeated argmax: for
 *           each query, the index of the largest score in a std::vector<double> (the first of
 *           equal scores), after which main knocks the winner out; prints index and value sums.
 * Pattern: argmax per row (if (v[i] > best) { best = v[i]; at = i; }), many ties, first index wins
 * CPU time: 0.44 s (g++ -O3, one core; user time, one run, 2026-11-26)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kQueries = 16;
const int kCandidates = 500;
const int kRounds = 5;
#else
const int kQueries = 2000;
const int kCandidates = 4096;
const int kRounds = 64;
#endif

void argmax_per_query(const std::vector<double> &scores, int queries, int candidates, std::vector<int> &best_index,
                      std::vector<double> &best_score) {
    for (int q = 0; q < queries; q++) {
        const int base = q * candidates;
        double best = scores[base];
        int at = 0;
        for (int i = 1; i < candidates; i++) {
            if (scores[base + i] > best) {
                best = scores[base + i];
                at = i;
            }
        }
        best_index[q] = at;
        best_score[q] = best;
    }
}

int main() {
    std::vector<double> scores(static_cast<size_t>(kQueries) * kCandidates);
    unsigned int state = 8675309u;
    for (size_t i = 0; i < scores.size(); i++) {
        state = state * 1664525u + 1013904223u;
        /* 0 .. 255.75 in steps of 1/4: every row has many equal scores */
        scores[i] = static_cast<double>(state >> 22) / 4.0;
    }
    std::vector<int> best_index(kQueries);
    std::vector<double> best_score(kQueries);
    long long index_sum = 0, weighted = 0;
    double score_sum = 0.0;
    for (int round = 0; round < kRounds; round++) {
        argmax_per_query(scores, kQueries, kCandidates, best_index, best_score);
        for (int q = 0; q < kQueries; q++) {
            index_sum += best_index[q];
            weighted += static_cast<long long>(best_index[q]) * (q % 97 + 1) * (round + 1);
            score_sum += best_score[q];
            scores[static_cast<size_t>(q) * kCandidates + best_index[q]] = -1.0; /* knocked out */
        }
    }
    std::printf("argmax: index sum %lld, weighted index sum %lld\n", index_sum, weighted);
    std::printf("argmax: score sum %.4f\n", score_sum);
    return 0;
}
