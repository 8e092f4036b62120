/* coin_change: the number of ways to make every amount up to a bound from a set of coin
 * denominations (modulo a prime), and the fewest coins for each amount. Pattern: 1-D DP
 * with a loop-carried dependence at distance coin (ways) and a min over coins (fewest). */
#include <stdio.h>
#include <stdlib.h>

#define AMOUNT 400000
#define MOD 1000000007LL

void count_ways(int amount, int ncoins, const int *coins, long long *ways) {
    ways[0] = 1;
    for (int a = 1; a <= amount; a++)
        ways[a] = 0;
    for (int c = 0; c < ncoins; c++)
        for (int a = coins[c]; a <= amount; a++)
            ways[a] = (ways[a] + ways[a - coins[c]]) % MOD;
}

void fewest_coins(int amount, int ncoins, const int *coins, int *fewest) {
    fewest[0] = 0;
    for (int a = 1; a <= amount; a++) {
        int best = 1 << 30;
        for (int c = 0; c < ncoins; c++)
            if (coins[c] <= a && fewest[a - coins[c]] + 1 < best)
                best = fewest[a - coins[c]] + 1;
        fewest[a] = best;
    }
}

int main(void) {
    int coins[] = {1, 2, 5, 10, 20, 50, 100, 200, 7, 13};
    int ncoins = (int)(sizeof(coins) / sizeof(coins[0]));
    long long *ways = malloc(sizeof(long long) * (AMOUNT + 1));
    int *fewest = malloc(sizeof(int) * (AMOUNT + 1));
    count_ways(AMOUNT, ncoins, coins, ways);
    fewest_coins(AMOUNT, ncoins, coins, fewest);
    long long coins_total = 0;
    for (int a = 0; a <= AMOUNT; a++)
        coins_total += fewest[a];
    printf("ways %lld fewest total %lld\n", ways[AMOUNT], coins_total);
    free(ways); free(fewest);
    return 0;
}
