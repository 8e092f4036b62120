/* midpoint_integral: integrate 4/(1+x^2) and x*exp(-x) over [0,1] with the midpoint rule
 * on many intervals. Pattern: scalar sum reductions with no input arrays. */
#include <math.h>
#include <stdio.h>

#define STEPS 20000000

double integrate_pi(long steps) {
    double h = 1.0 / steps, sum = 0.0;
    for (long i = 0; i < steps; i++) {
        double x = (i + 0.5) * h;
        sum += 4.0 / (1.0 + x * x);
    }
    return sum * h;
}

double integrate_xexp(long steps) {
    double h = 1.0 / steps, sum = 0.0;
    for (long i = 0; i < steps; i++) {
        double x = (i + 0.5) * h;
        sum += x * exp(-x);
    }
    return sum * h;
}

int main(void) {
    double pi = integrate_pi(STEPS);
    double xe = integrate_xexp(STEPS / 4);
    printf("pi %.10f x*exp(-x) %.10f\n", pi, xe);
    return 0;
}
