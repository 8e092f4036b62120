/* The rounding intrinsics fp_exact writes, for the CPU emulator (cuda_emulation.h): on
   x86-64 without -march the host never fuses a multiply and an add, so the plain
   operators round as the intrinsics do on the GPU. */
#pragma once
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
