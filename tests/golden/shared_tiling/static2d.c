#include <stdio.h>

#define N 70
#define K 90
#define M 60

static float a[N][K];
static float b[K][M];
static float c[N][M];

/* c = alpha * a b + beta * c on fixed-size 2-D arrays, with a bias read in the epilogue
   and a k loop that counts by two from one */
void gemm(float alpha, float beta)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            float acc = 0.0f;
            for (int k = 1; k < K; k += 2) {
                float t = a[i][k] * b[k][j];
                acc += t + 0.5f * a[i][k - 1];
            }
            c[i][j] = alpha * acc + beta * c[i][j];
        }
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int k = 0; k < K; k++)
            a[i][k] = ((i + 2 * k) % 9) * 0.25f;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < M; j++)
            b[k][j] = ((3 * k + j) % 7) * 0.5f - 1.0f;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            c[i][j] = (i - j) * 0.01f;
    gemm(1.5f, 0.5f);
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            sum += c[i][j] * ((i + j) % 4);
    printf("weighted=%.6e c[0][0]=%.4f c[N-1][M-1]=%.4f\n", sum, c[0][0], c[N - 1][M - 1]);
    return 0;
}
