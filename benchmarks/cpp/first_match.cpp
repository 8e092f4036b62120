/*
 * Name: first_match
 * Category: cpp
 * Computes: for a series of (price, quantity) thresholds, the first order in a
 *           std::vector of structs that passes both, with its id, and the position of the
 *           first order of a given customer (the loop index itself); prints their sums.
 * Pattern: find-first with an early exit (if (test) { found = i; id = ...; break; })
 * CPU time: 0.56 s (g++ -O3, one core; user time, one run, 2026-11-25)
 */
#include <cstdio>
#include <vector>

#ifdef BENCH_SMALL
const int kOrders = 5000;
const int kSearches = 6;
const double kFloor = 950.0;
const int kQuantity = 800;
#else
const int kOrders = 4000000;
const int kSearches = 120;
const double kFloor = 999.0;
const int kQuantity = 1000;
#endif

struct Order {
    double price;
    int quantity;
    int customer;
    long id;
};

long first_passing(const std::vector<Order> &orders, double price, int quantity, long *id) {
    const long n = static_cast<long>(orders.size());
    long found = -1;
    long found_id = -1;
    for (long i = 0; i < n; i++) {
        if (orders[i].price > price && orders[i].quantity >= quantity) {
            found = i;
            found_id = orders[i].id;
            break;
        }
    }
    *id = found_id;
    return found;
}

long first_of_customer(const std::vector<Order> &orders, int customer) {
    const long n = static_cast<long>(orders.size());
    long i;
    for (i = 0; i < n; i++)
        if (orders[i].customer == customer)
            break;
    return i;
}

int main() {
    std::vector<Order> orders(kOrders);
    unsigned int state = 424242u;
    for (long i = 0; i < kOrders; i++) {
        state = state * 1664525u + 1013904223u;
        orders[i].price = (double)(state >> 8 & 0xffff) / 65.536; /* 0 .. 1000 */
        state = state * 1664525u + 1013904223u;
        orders[i].quantity = (int)(state >> 10 & 1023);
        orders[i].customer = (int)(state >> 20 & 4095) * 977 % 3000007;
        orders[i].id = 1000000L + i * 7;
    }
    long position_sum = 0, id_sum = 0, customer_sum = 0;
    for (int s = 0; s < kSearches; s++) {
        long id = 0;
        /* later searches ask for rarer orders: the hits move deep into the vector */
        long at = first_passing(orders, kFloor + 0.008 * s, kQuantity + (s % 20), &id);
        position_sum += at;
        id_sum += id;
        customer_sum += first_of_customer(orders, (s * 7919) % 3000007);
    }
    std::printf("first passing: position sum %ld, id sum %ld\n", position_sum, id_sum);
    std::printf("first of customer: position sum %ld\n", customer_sum);
    return 0;
}
