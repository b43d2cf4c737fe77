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

// ITER × CHAINS eight-wide operations per thread.
static double reg_ops(long iter, int fma) {
    double tmax = 0;
#pragma omp parallel
    {
        double t0 = now();
        __m256 a[CHAINS];
        __m256 x = _mm256_set1_ps(1e-7f), y = _mm256_set1_ps(0.999999f);
        for (int c = 0; c < CHAINS; c++) a[c] = _mm256_set1_ps((float)c);
        for (long i = 0; i < iter; i++) {
            for (int c = 0; c < CHAINS; c++)
                a[c] = fma ? _mm256_fmadd_ps(a[c], y, x) : _mm256_add_ps(a[c], x);
            __asm__ volatile("" : "+x"(a[0]), "+x"(a[1]), "+x"(a[2]), "+x"(a[3]), "+x"(a[4]), "+x"(a[5]),
                             "+x"(a[6]), "+x"(a[7]), "+x"(a[8]), "+x"(a[9]), "+x"(a[10]), "+x"(a[11]));
        }
        __m256 s = a[0];
        for (int c = 1; c < CHAINS; c++) s = _mm256_add_ps(s, a[c]);
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
        __m256 a[8];
        for (int c = 0; c < 8; c++) a[c] = _mm256_setzero_ps();
        double t0 = now();
        for (long r = 0; r < reps; r++)
            for (int i = 0; i < len; i += 8)
                for (int c = 0; c < 8; c++) a[c] = _mm256_add_ps(a[c], _mm256_load_ps(blk + 8 * idx[i + c]));
        __m256 t = a[0];
        for (int c = 1; c < 8; c++) t = _mm256_add_ps(t, a[c]);
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
