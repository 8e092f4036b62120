/* Loops for the segmented method: segment sums over CSR offsets (empty segments too), a
   row maximum then a division, argmax (the first of equal values) and argmin with <= over
   an inclusive bound (the last of equal values), a bitwise or with a step of 2, and loops
   it must leave as they are. */
#include <cstdio>
#include <vector>

void segment_sums(const std::vector<double> &values, const std::vector<int> &offsets,
                  std::vector<double> &sums, int segments)
{
    for (int s = 0; s < segments; s++) {
        double acc = 0.5;
        for (int j = offsets[s]; j < offsets[s + 1]; j++)
            acc += values[j];
        sums[s] = acc;
    }
}

void normalise_rows(const std::vector<float> &x, std::vector<float> &y, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        float top = x[r * cols];
        for (int c = 1; c < cols; c++)
            if (x[r * cols + c] > top)
                top = x[r * cols + c];
        const float inverse = 1.0f / top;
        for (int c = 0; c < cols; c++)
            y[r * cols + c] = x[r * cols + c] * inverse;
    }
}

void choices(const std::vector<int> &scores, int rows, int cols, std::vector<int> &first_max,
             std::vector<int> &last_min)
{
    for (int r = 0; r < rows; r++) {
        int best = scores[r * cols], at = 0;
        for (int c = 1; c < cols; c++) {
            if (scores[r * cols + c] > best) {
                best = scores[r * cols + c];
                at = c;
            }
        }
        int low = 5, where = -1;
        for (int c = 0; c <= cols - 1; c++) {
            if (scores[r * cols + c] <= low) {
                low = scores[r * cols + c];
                where = c;
            }
        }
        first_max[r] = at * 100 + best;
        last_min[r] = where * 100 + low;
    }
}

void even_bits(const unsigned *words, unsigned *out, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        unsigned mask = 0u;
        for (int c = 0; c < cols; c += 2)
            mask |= words[r * cols + c];
        out[r] = mask;
    }
}

/* left alone: the inner loop carries a value that is no reduction */
void decay(const double *x, double *y, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        double run = 0.0;
        for (int c = 0; c < cols; c++)
            run = run * 0.5 + x[r * cols + c];
        y[r] = run;
    }
}

double weight(int r) { return 1.0 + 0.125 * (r % 4); }

/* left alone: every lane would call a function of the program */
void weighted(const double *x, double *y, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        const double w = weight(r);
        double sum = 0.0;
        for (int c = 0; c < cols; c++)
            sum += x[r * cols + c];
        y[r] = w * sum;
    }
}

/* scans per row: inclusive with a local term; exclusive xor; a store of a value of the sum;
   and one that stores twice (left alone) */
void row_prefix(const std::vector<double> &x, std::vector<double> &y, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        double run = 0.25 * r;
        for (int c = 0; c < cols; c++) {
            const double half = x[r * cols + c] * 0.5;
            run += half;
            y[r * cols + c] = run;
        }
    }
}

void row_xor_before(const std::vector<unsigned> &words, std::vector<unsigned> &out, int rows,
                    int cols)
{
    for (int r = 0; r < rows; r++) {
        unsigned seen = 7u;
        for (int c = 0; c < cols; c++) {
            out[r * cols + c] = seen;
            seen ^= words[r * cols + c] + (unsigned)c;
        }
    }
}

void row_doubled(const std::vector<double> &x, std::vector<double> &y, int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        double run = 0.0;
        for (int c = 0; c < cols; c++) {
            run += x[r * cols + c];
            y[r * cols + c] = 2.0 * run;
        }
    }
}

void row_twice(const std::vector<double> &x, std::vector<double> &y, std::vector<double> &z,
               int rows, int cols)
{
    for (int r = 0; r < rows; r++) {
        double run = 0.0;
        for (int c = 0; c < cols; c++) {
            run += x[r * cols + c];
            y[r * cols + c] = run;
            z[r * cols + c] = -run;
        }
    }
}

int main()
{
    int rows = 75, cols = 45;
    unsigned state = 12345u;
    std::vector<int> offsets(rows + 1);
    offsets[0] = 0;
    for (int s = 0; s < rows; s++) {
        state = state * 1664525u + 1013904223u;
        offsets[s + 1] = offsets[s] + (int)(state >> 16 & 63); /* 0 .. 63: some empty */
    }
    std::vector<double> values(offsets[rows]);
    for (size_t i = 0; i < values.size(); i++) {
        state = state * 1664525u + 1013904223u;
        values[i] = (double)(state >> 8 & 0xffff) / 4096.0 - 3.0;
    }
    std::vector<double> sums(rows);
    segment_sums(values, offsets, sums, rows);

    std::vector<float> x(rows * cols), y(rows * cols);
    std::vector<int> scores(rows * cols);
    std::vector<unsigned> words(rows * cols);
    std::vector<double> dx(rows * cols);
    for (int i = 0; i < rows * cols; i++) {
        state = state * 1664525u + 1013904223u;
        x[i] = 0.5f + (float)(state >> 20) / 256.0f;
        scores[i] = (int)(state >> 13 & 7); /* 0 .. 7: many ties */
        words[i] = 1u << (state >> 27);
        dx[i] = (double)(state >> 9 & 1023) / 64.0;
    }
    normalise_rows(x, y, rows, cols);
    std::vector<int> first_max(rows), last_min(rows);
    choices(scores, rows, cols, first_max, last_min);
    std::vector<unsigned> bits(rows);
    even_bits(words.data(), bits.data(), rows, cols);
    std::vector<double> decayed(rows), weights(rows);
    decay(dx.data(), decayed.data(), rows, cols);
    weighted(dx.data(), weights.data(), rows, cols);
    std::vector<double> prefix(rows * cols), doubled(rows * cols), once(rows * cols),
        twice(rows * cols);
    std::vector<unsigned> before(rows * cols);
    row_prefix(dx, prefix, rows, cols);
    row_xor_before(words, before, rows, cols);
    row_doubled(dx, doubled, rows, cols);
    row_twice(dx, once, twice, rows, cols);

    double total = 0.0, normalised = 0.0, tail = 0.0;
    long long picks = 0;
    unsigned all_bits = 0u;
    for (int r = 0; r < rows; r++) {
        total += sums[r] * (r % 7 + 1);
        picks += (long long)first_max[r] * (r + 1) + (long long)last_min[r] * (r + 3);
        all_bits ^= bits[r] * (unsigned)(r + 1);
        tail += decayed[r] + weights[r];
    }
    unsigned scanned_bits = 0u;
    for (int i = 0; i < rows * cols; i++) {
        normalised += y[i] * (i % 11);
        tail += (prefix[i] + doubled[i] + once[i] - twice[i]) * (i % 3 + 1);
        scanned_bits += before[i] * (unsigned)(i % 13 + 1);
    }
    std::printf("sums %.9e\n", total);
    std::printf("normalised %.6e\n", normalised);
    std::printf("picks %lld bits %u\n", picks, all_bits);
    std::printf("tail %.9e scanned bits %u\n", tail, scanned_bits);
    return 0;
}
