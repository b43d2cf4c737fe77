// Peak throughput of this CPU for the roofline of BENCHMARKS.md ("RBM roofline"):
// AVX2 vaddps / vfmadd (register only, 12 independent chains), vaddps with an L1 load operand
// (the shape of linalg::binary's row sums), and streaming read bandwidth from memory.
// Build: gcc -O2 -mavx2 -mfma -fopenmp bench/roofline/peak.c -o /tmp/peak
// Run:   OMP_NUM_THREADS=1 /tmp/peak; OMP_NUM_THREADS=2 /tmp/peak   (figures per run, summed over threads)
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// CPU time of the calling thread: on a machine shared with other jobs this counts the cycles
// the work itself ran (each timed section runs on every thread and is timed on the master,
// summed figures assume the threads ran alike).
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define CHAINS 12
static float sink;

// Keeps a thread's result alive and the slowest thread's time.
static void record(__m256 v, double dt, double *tmax) {
    float o[8];
    _mm256_storeu_ps(o, v);
#pragma omp critical
    {
        sink += o[0];
        if (dt > *tmax) *tmax = dt;
    }
}

// ITER × CHAINS eight-wide operations per thread. The twelve accumulators are separate
// variables, not an array: with an array gcc kept them on the stack and every operation
// became a load, the operation and a store, which measured the store-to-load forwarding
// latency (1.75 G/s per core) instead of the arithmetic (the first version of this file).
#define OP12(OP)                                                                            \
    OP(a0); OP(a1); OP(a2); OP(a3); OP(a4); OP(a5); OP(a6); OP(a7); OP(a8); OP(a9); OP(a10); \
    OP(a11)
static double reg_ops(long iter, int fma) {
    double tmax = 0;
#pragma omp parallel
    {
        double t0 = now();
        __m256 x = _mm256_set1_ps(1e-7f), y = _mm256_set1_ps(0.999999f);
        __m256 a0 = _mm256_set1_ps(0), a1 = _mm256_set1_ps(1), a2 = _mm256_set1_ps(2),
               a3 = _mm256_set1_ps(3), a4 = _mm256_set1_ps(4), a5 = _mm256_set1_ps(5),
               a6 = _mm256_set1_ps(6), a7 = _mm256_set1_ps(7), a8 = _mm256_set1_ps(8),
               a9 = _mm256_set1_ps(9), a10 = _mm256_set1_ps(10), a11 = _mm256_set1_ps(11);
#define ADD(a) a = _mm256_add_ps(a, x)
#define FMA(a) a = _mm256_fmadd_ps(a, y, x)
// an empty asm that "changes" the accumulators, so the compiler keeps all twelve chains
// (without it gcc merged the additions of the same constant into one chain)
#define KEEP                                                                               \
    __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5),      \
                     "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11))
        if (fma)
            for (long i = 0; i < iter; i++) { OP12(FMA); KEEP; }
        else
            for (long i = 0; i < iter; i++) { OP12(ADD); KEEP; }
        __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                 _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
        s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
        record(s, now() - t0, &tmax);
    }
    return tmax;
}

// Sums of rows of a 16 KB block (L1) selected by an index list, 8 accumulators: vaddps ymm, [mem].
static double l1_adds(long reps, long *n_adds) {
    const int rows = 500, len = 4096;
    long total = 0;
    double tmax = 0;
#pragma omp parallel reduction(+ : total)
    {
        float *blk = aligned_alloc(32, rows * 8 * sizeof(float));
        unsigned *idx = malloc(len * sizeof(unsigned));
        for (int i = 0; i < rows * 8; i++) blk[i] = 1e-6f * i;
        unsigned s = 12345u + omp_get_thread_num();
        for (int i = 0; i < len; i++) { s = s * 1664525u + 1013904223u; idx[i] = (s >> 8) % rows; }
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
               a7 = a0;
        double t0 = now();
#define LD(c) _mm256_load_ps(blk + 8 * idx[i + c])
        for (long r = 0; r < reps; r++)
            for (int i = 0; i < len; i += 8) {
                a0 = _mm256_add_ps(a0, LD(0)); a1 = _mm256_add_ps(a1, LD(1));
                a2 = _mm256_add_ps(a2, LD(2)); a3 = _mm256_add_ps(a3, LD(3));
                a4 = _mm256_add_ps(a4, LD(4)); a5 = _mm256_add_ps(a5, LD(5));
                a6 = _mm256_add_ps(a6, LD(6)); a7 = _mm256_add_ps(a7, LD(7));
            }
        __m256 t = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                 _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
        record(t, now() - t0, &tmax);
        total += reps * len;
        free(blk);
        free(idx);
    }
    *n_adds = total;
    return tmax;
}

// Streaming read of 256 MB per thread (far beyond the caches), AVX2 loads.
static double stream_read(long *bytes) {
    const long n = 64L << 20;  // floats per thread
    long total = 0;
    double t = 0;
#pragma omp parallel reduction(+ : total)
    {
        float *x = aligned_alloc(32, n * sizeof(float));
        for (long i = 0; i < n; i++) x[i] = 1.0f;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
#pragma omp barrier
        double t0 = now();
        for (int rep = 0; rep < 3; rep++)
            for (long i = 0; i < n; i += 32) {
                a0 = _mm256_add_ps(a0, _mm256_load_ps(x + i));
                a1 = _mm256_add_ps(a1, _mm256_load_ps(x + i + 8));
                a2 = _mm256_add_ps(a2, _mm256_load_ps(x + i + 16));
                a3 = _mm256_add_ps(a3, _mm256_load_ps(x + i + 24));
            }
#pragma omp barrier
        double dt = now() - t0;
#pragma omp master
        t = dt;
        float o[8];
        _mm256_storeu_ps(o, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
#pragma omp atomic
        sink += o[0];
        total += 3 * n * (long)sizeof(float);
        free(x);
    }
    *bytes = total;
    return t;
}

int main(void) {
    int th = omp_get_max_threads();
    const long iter = 200000000L;
    for (int round = 0; round < 3; round++) {
        double ta = reg_ops(iter, 0), tf = reg_ops(iter, 1);
        long n_l1, bytes;
        double tl = l1_adds(20000, &n_l1), tm = stream_read(&bytes);
        printf("threads %d round %d: vaddps %.2f G/s  vfmadd %.2f G/s  (8-wide, all threads)  "
               "L1 indexed vaddps %.2f G/s  memory read %.1f GB/s\n",
               th, round, th * iter * CHAINS / ta * 1e-9, th * iter * CHAINS / tf * 1e-9,
               n_l1 / tl * 1e-9, bytes / tm * 1e-9);
    }
    return sink == 12345.0f;
}
