# Numerically safe special functions for the kernels, all inline and nogil.
from libc.math cimport exp, log, log1p, fabs, isnan, erfc, tanh, INFINITY


cdef inline double log1pexp(double x) noexcept nogil:
    """log(1 + e^x) for any x, without overflow or cancellation."""
    if x > 36.0:
        # log1p(e^-x) = e^-x to double precision here
        return x + exp(-x)
    if x < -37.0:
        # log1p(e^x) = e^x (1 - e^x / 2 + ...) and e^x < 1e-16
        return exp(x)
    return log1p(exp(x))


cdef inline double logaddexp(double a, double b) noexcept nogil:
    """log(e^a + e^b), also for infinite a or b."""
    if a == b:
        return a + 0.6931471805599453   # log 2; also covers a = b = +-inf
    if a > b:
        return a + log1pexp(b - a)
    return b + log1pexp(a - b)


cdef inline double logsumexp(const double* a, Py_ssize_t n) noexcept nogil:
    """log(sum_i e^{a_i}) with the max shift; -inf for n == 0."""
    cdef Py_ssize_t i
    cdef double m = -INFINITY, s = 0.0
    for i in range(n):
        if a[i] > m or isnan(a[i]):
            m = a[i]
    if n == 0 or m == INFINITY or m == -INFINITY or isnan(m):
        return m
    for i in range(n):
        s += exp(a[i] - m)
    return m + log(s)


cdef inline double wright_omega(double x) noexcept nogil:
    """Wright omega: the w > 0 with w + log w = x, i.e. W_0(e^x).

    Evaluated from x, never forming e^x where it could overflow (x can be
    1e6). Initial guesses by region as in Lawrence, Corless & Jeffrey (2012,
    ACM TOMS Algorithm 917), refined by at most three fourth-order
    Fritsch-Shafer-Crowley steps on r = x - w - log w; relative error below
    1e-15 in practice.
    """
    cdef double w, r, q, t, wp1
    cdef int _
    if isnan(x):
        return x
    if x == INFINITY:
        return x
    if x < -36.0:
        # W(z) = z - z^2 + ...: e^x alone is exact to double precision
        return exp(x)
    if x <= -2.0:
        t = exp(x)
        w = t * (1.0 - t * (1.0 - 1.5 * t))
    elif x <= 1.0:
        t = x - 1.0
        # Taylor series of omega around x = 1, where omega(1) = 1
        w = 1.0 + t * (0.5 + t * (1.0 / 16.0 + t * (-1.0 / 192.0
                      + t * (-1.0 / 3072.0 + t * 13.0 / 61440.0))))
    else:
        t = log(x)
        w = x - t + t / x
    for _ in range(3):
        r = x - w - log(w)
        if fabs(r) <= 1e-17 * (1.0 + fabs(x)):
            break
        wp1 = 1.0 + w
        q = 2.0 * wp1 * (wp1 + (2.0 / 3.0) * r)
        w = w * (1.0 + (r / wp1) * (q - r) / (q - 2.0 * r))
    return w


# ---- noise models of augment and reduce (Ruiz et al. 2018, Sec. 3.2) ----
# log Phi and its derivative phi / Phi for the standard normal, evaluated in
# log space so that they stay accurate far in the lower tail, where Phi itself
# underflows (Phi(-40) ~ 1e-350).

cdef inline double _mills_series(double x) noexcept nogil:
    """S(x) = 1 - 1/x^2 + 3/x^4 - 15/x^6 + ..., Phi(x) = phi(x) S(x) / (-x).

    The asymptotic series of the normal tail; used for x <= -20 only, where
    twelve terms are accurate to 1e-17 (the k-th term is (2k-1)!! / x^2k).
    """
    cdef double z = 1.0 / (x * x), term = 1.0, s = 1.0
    cdef int k
    for k in range(1, 13):
        term = -term * (2 * k - 1) * z
        s += term
    return s


cdef inline double log_ndtr(double x) noexcept nogil:
    """log Phi(x) of the standard normal, accurate for every finite x.

    erfc keeps full relative accuracy down to x = -20 (Phi ~ 3e-89); below,
    the asymptotic series gives log Phi directly, without forming Phi.
    """
    if x >= 0.0:
        # Phi = 1 - erfc(x / sqrt 2) / 2: log1p avoids the cancellation
        return log1p(-0.5 * erfc(x * 0.7071067811865476))
    if x > -20.0:
        return log(0.5 * erfc(-x * 0.7071067811865476))
    return (-0.5 * x * x - log(-x) - 0.9189385332046728
            + log(_mills_series(x)))


cdef inline double ndtr_mills(double x) noexcept nogil:
    """phi(x) / Phi(x) = d/dx log Phi(x), the inverse Mills ratio at -x.

    Grows like -x in the lower tail; computed there from the series, never
    as a ratio of two underflowing numbers. Above -20 both phi (>= e^-200)
    and Phi (>= 3e-89) are normal numbers with full relative accuracy.
    """
    if x <= -20.0:
        return -x / _mills_series(x)
    return (0.3989422804014327 * exp(-0.5 * x * x)
            / (0.5 * erfc(-x * 0.7071067811865476)))


cdef inline double log_ndtr_mills(double x, double* mills) noexcept nogil:
    """log_ndtr(x), with ndtr_mills(x) in ``mills``: one erfc for both."""
    cdef double phi_x, tail
    if x <= -20.0:
        mills[0] = -x / _mills_series(x)
        return log_ndtr(x)
    phi_x = 0.3989422804014327 * exp(-0.5 * x * x)
    if x >= 0.0:
        tail = 0.5 * erfc(x * 0.7071067811865476)     # 1 - Phi
        mills[0] = phi_x / (1.0 - tail)
        return log1p(-tail)
    tail = 0.5 * erfc(-x * 0.7071067811865476)        # Phi
    mills[0] = phi_x / tail
    return log(tail)


cdef inline double log_sigmoid(double x) noexcept nogil:
    """log sigma(x) = -log(1 + e^-x), the log-CDF of the standard logistic."""
    return -log1pexp(-x)


cdef inline double sigmoid(double x) noexcept nogil:
    """1 / (1 + e^-x) for any x (0 at -inf, 1 at +inf), no overflow."""
    cdef double e
    if x >= 0.0:
        return 1.0 / (1.0 + exp(-x))
    e = exp(x)
    return e / (1.0 + e)


cdef inline double bound_beta(double r) noexcept nogil:
    """tanh(r / 2) / (2 r), the curvature weight of Jebara's bound.

    Choromanska & Jebara (2013), Alg. 1, with r = log(alpha / z): even in r,
    1/4 at r = 0 (the series 1/4 (1 - r^2/12 + r^4/120 - 17 r^6/20160)
    below |r| = 0.05, where the quotient would lose digits), 1 / (2 |r|) for
    large |r| and 0 at r = +-inf (the first term of the enumeration).
    """
    cdef double r2
    if isnan(r):
        return r
    r = fabs(r)
    if r == INFINITY:
        return 0.0
    if r < 0.05:
        r2 = r * r
        return 0.25 * (1.0 - r2 / 12.0 * (1.0 - r2 / 10.0
                                         * (1.0 - r2 * 17.0 / 168.0)))
    return tanh(0.5 * r) / (2.0 * r)


# Row-wise log-sum-exp for exact evaluation (_evaluation.pyx.tp). Exact
# prediction at many classes spends most of its time in exp: one per (row,
# class). libm's exp is a call per element that no loop vectorises, so these
# are plain C: a polynomial exp that GCC turns into vector code, compiled
# twice where the compiler can (x86-64 GCC/clang): for AVX2+FMA, chosen at
# run time when the CPU has them (measured 1.5 ns per exp against 5.9 ns
# for the SSE2 build of the same loop), and for the baseline. The same holds
# for the A&R quadrature's loops over classes (_quadrature_fast.pyx.tp): the
# logistic log-CDF of a row and the per-class sums of exps.
cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #include <stdlib.h>
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    #define SKS_X86_DISPATCH 1
    #endif

    /* The instruction set every kernel of the package dispatches to, read
       once per extension module: 0 the baseline (x86-64's SSE2, or any
       other architecture), 1 AVX2 + FMA, 2 also AVX-512 F, DQ and VL.
       The environment variable SKSOFTMAX_CPU_DISPATCH caps it: "generic"
       forces the baseline, "avx2" at most AVX2 (a CPU never gets more
       than it has), so one machine can run the code paths of another
       (sksoftmax/__init__.py rejects any other value). */
    static int sks_cpu_level(void) {
        static int level = -1;
        if (level < 0) {
            int found = 0;
            const char* cap = getenv("SKSOFTMAX_CPU_DISPATCH");
    #ifdef SKS_X86_DISPATCH
            if (__builtin_cpu_supports("avx2")
                    && __builtin_cpu_supports("fma")) {
                found = 1;
                if (__builtin_cpu_supports("avx512f")
                        && __builtin_cpu_supports("avx512dq")
                        && __builtin_cpu_supports("avx512vl"))
                    found = 2;
            }
    #endif
            if (cap != NULL && strcmp(cap, "generic") == 0)
                found = 0;
            else if (cap != NULL && strcmp(cap, "avx2") == 0 && found > 1)
                found = 1;
            level = found;
        }
        return level;
    }

    /* e^x for x <= 0 to within about 1 ulp (measured max relative error
       3.2e-16 on [-708, 0]), branch-free so that loops over it vectorise.
       x = n ln2 + r, |r| <= ln2 / 2 (Cody-Waite, ln2 in two parts); e^r by
       its Taylor polynomial of degree 12 (remainder r^13 / 13! < 2e-16);
       2^n built in the exponent bits: adding 1.5 * 2^52 rounds x log2(e)
       to the integer n and leaves n in the low bits of t, so
       (bits(t) << 52) + (1023 << 52) is the bit pattern of 2^n. Below -708
       (where 2^n would leave the normal range) the result is 0: the exact
       value is below 3e-308, an absolute error no probability or sum of
       them shows. NaN gives NaN; -inf gives 0. */
    static inline double sks_exp_nonpos(double x) {
        const double shifter = 6755399441055744.0;
        double xc = x < -708.0 ? -708.0 : x;
        double t = xc * 1.4426950408889634 + shifter;
        double n = t - shifter;
        double r = (xc - n * 6.93147180369123816490e-01)
                   - n * 1.90821492927058770002e-10;
        double p = 2.08767569878680989792e-09;
        p = p * r + 2.50521083854417187751e-08;
        p = p * r + 2.75573192239858906526e-07;
        p = p * r + 2.75573192239858906526e-06;
        p = p * r + 2.48015873015873015873e-05;
        p = p * r + 1.98412698412698412698e-04;
        p = p * r + 1.38888888888888888889e-03;
        p = p * r + 8.33333333333333333333e-03;
        p = p * r + 4.16666666666666666667e-02;
        p = p * r + 1.66666666666666666667e-01;
        p = p * r + 0.5;
        p = p * r + 1.0;
        p = p * r + 1.0;
        uint64_t bits;
        memcpy(&bits, &t, sizeof bits);
        bits = (bits << 52) + ((uint64_t)1023 << 52);
        double scale;
        memcpy(&scale, &bits, sizeof scale);
        return x < -708.0 ? 0.0 : p * scale;
    }

    #define SKS_EXP_SHIFTED_BODY \
        for (Py_ssize_t k = 0; k < n; k++) e[k] = sks_exp_nonpos(s[k] - m);

    static void sks_exp_shifted_base(const double* s, double* e,
                                     Py_ssize_t n, double m) {
        SKS_EXP_SHIFTED_BODY
    }
    #ifdef SKS_X86_DISPATCH
    __attribute__((target("avx2,fma")))
    static void sks_exp_shifted_avx2(const double* s, double* e,
                                     Py_ssize_t n, double m) {
        SKS_EXP_SHIFTED_BODY
    }
    #endif

    /* e[k] = e^{s[k] - m} (e may be s). */
    static void sks_exp_shifted(const double* s, double* e, Py_ssize_t n,
                                double m) {
    #ifdef SKS_X86_DISPATCH
        if (sks_cpu_level() >= 1) {
            sks_exp_shifted_avx2(s, e, n, m);
            return;
        }
    #endif
        sks_exp_shifted_base(s, e, n, m);
    }

    /* max_k s[k] (NaN entries skipped: they make the exps NaN) and
       sum_k s[k], four lanes each (no loop-carried chain). */
    static double sks_row_max(const double* s, Py_ssize_t n) {
        double a[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
        Py_ssize_t k = 0;
        for (; k + 4 <= n; k += 4)
            for (int l = 0; l < 4; l++)
                a[l] = s[k + l] > a[l] ? s[k + l] : a[l];
        for (; k < n; k++)
            a[0] = s[k] > a[0] ? s[k] : a[0];
        a[0] = a[1] > a[0] ? a[1] : a[0];
        a[2] = a[3] > a[2] ? a[3] : a[2];
        return a[2] > a[0] ? a[2] : a[0];
    }

    static double sks_row_sum(const double* s, Py_ssize_t n) {
        double a[4] = {0.0, 0.0, 0.0, 0.0};
        Py_ssize_t k = 0;
        for (; k + 4 <= n; k += 4)
            for (int l = 0; l < 4; l++)
                a[l] += s[k + l];
        for (; k < n; k++)
            a[0] += s[k];
        return (a[0] + a[1]) + (a[2] + a[3]);
    }

    /* log(1 + u) for -1/2 <= u <= 1, branch-free (vectorises): 2 atanh(s)
       with s = u / (2 + u) in [-1/3, 1/3], by its series 2 s sum_n
       s^2n / (2n + 1) to n = 17 (the next term is below 2e-19 of the
       first); about 1 ulp. */
    static inline double sks_log1p_series_s(double s) {
        /* 2 atanh(s) = log((1 + s) / (1 - s)) for |s| <= 1/3: the series
           2 s sum_n s^2n / (2n + 1) to n = 17 (also read by the
           quadrature's logistic rows, _special_rows.pxd) */
        double s2 = s * s;
        double p = 1.0 / 35.0;
        p = p * s2 + 1.0 / 33.0;
        p = p * s2 + 1.0 / 31.0;
        p = p * s2 + 1.0 / 29.0;
        p = p * s2 + 1.0 / 27.0;
        p = p * s2 + 1.0 / 25.0;
        p = p * s2 + 1.0 / 23.0;
        p = p * s2 + 1.0 / 21.0;
        p = p * s2 + 1.0 / 19.0;
        p = p * s2 + 1.0 / 17.0;
        p = p * s2 + 1.0 / 15.0;
        p = p * s2 + 1.0 / 13.0;
        p = p * s2 + 1.0 / 11.0;
        p = p * s2 + 1.0 / 9.0;
        p = p * s2 + 1.0 / 7.0;
        p = p * s2 + 1.0 / 5.0;
        p = p * s2 + 1.0 / 3.0;
        p = p * s2 + 1.0;
        return 2.0 * s * p;
    }
    static inline double sks_log1p_unit(double u) {
        return sks_log1p_series_s(u / (2.0 + u));
    }

    /* lc[k] = log sigma(t - psi[k]) = min(z, 0) - log(1 + e^-|z|), the
       log-CDF of the standard logistic at z = t - psi[k] (0 at z = +inf),
       for every k: the vectorised loop of the A&R quadrature. */
    #define SKS_LOG_SIGMOID_BODY \
        for (Py_ssize_t k = 0; k < n; k++) { \
            double z = t - psi[k]; \
            double a = z < 0.0 ? -z : z; \
            lc[k] = (z < 0.0 ? z : 0.0) \
                    - sks_log1p_unit(sks_exp_nonpos(-a)); \
        }

    /* The same from e^psi[k] and e^-psi[k] (ep, en): e^-|z| is e^-t ep[k]
       for z >= 0 and e^t en[k] below, a product instead of an exp (for
       -700 <= t <= 700 and psi[k] >= -700 where en[k] is used: then
       neither factor overflows; about 2 ulp more on e^-|z|, below 3e-16
       absolutely on the log-CDF). */
    #define SKS_LOG_SIGMOID_E_BODY \
        for (Py_ssize_t k = 0; k < n; k++) { \
            double z = t - psi[k]; \
            double e = z < 0.0 ? e_t * en[k] : e_mt * ep[k]; \
            lc[k] = (z < 0.0 ? z : 0.0) - sks_log1p_unit(e); \
        }

    /* s[k] += e^(v[k] - m[k]), every v[k] <= m[k]: the sums of the
       quadrature's per-class log-sum-exp. */
    #define SKS_EXP_ACCUMULATE_BODY \
        for (Py_ssize_t k = 0; k < n; k++) \
            s[k] += sks_exp_nonpos(v[k] - m[k]);

    static void sks_log_sigmoid_base(double t, const double* psi,
                                     double* lc, Py_ssize_t n) {
        SKS_LOG_SIGMOID_BODY
    }
    static void sks_exp_accumulate_base(const double* v, const double* m,
                                        double* s, Py_ssize_t n) {
        SKS_EXP_ACCUMULATE_BODY
    }
    static void sks_log_sigmoid_e_base(double t, double e_t, double e_mt,
                                       const double* psi, const double* ep,
                                       const double* en, double* lc,
                                       Py_ssize_t n) {
        SKS_LOG_SIGMOID_E_BODY
    }
    #ifdef SKS_X86_DISPATCH
    __attribute__((target("avx2,fma")))
    static void sks_log_sigmoid_e_avx2(double t, double e_t, double e_mt,
                                       const double* psi, const double* ep,
                                       const double* en, double* lc,
                                       Py_ssize_t n) {
        SKS_LOG_SIGMOID_E_BODY
    }
    __attribute__((target("avx2,fma")))
    static void sks_log_sigmoid_avx2(double t, const double* psi,
                                     double* lc, Py_ssize_t n) {
        SKS_LOG_SIGMOID_BODY
    }
    __attribute__((target("avx2,fma")))
    static void sks_exp_accumulate_avx2(const double* v, const double* m,
                                        double* s, Py_ssize_t n) {
        SKS_EXP_ACCUMULATE_BODY
    }
    #endif

    /* log Phi(z) of the standard normal from a table of the log of the
       Mills ratio, L(x) = log(Q(x) / phi(x)) for x = |z| < 64 (Q = 1 -
       Phi): in pieces of 1/16, a polynomial of degree 6 in u in [-1, 1]
       each (``SKS_LOG_MILLS_STRIDE`` coefficients, constant term first;
       built by _special.pyx's log_mills_table), so that log Q(x) =
       -x^2 / 2 - log sqrt(2 pi) + L(x) takes no erfc and no log, and
       log Phi(z) is log Q(-z) for z < 0 and log1p(-Q(z)) for z >= 0.
       Branch-free; right for every z > -64, including +-inf (then
       exactly 0 / -inf); below -64 the caller uses log_ndtr. */
    #define SKS_LOG_MILLS_PER_UNIT 16
    #define SKS_LOG_MILLS_PIECES 1024
    #define SKS_LOG_MILLS_STRIDE 7
    #define SKS_LOG_MILLS_CAP 63.9990234375
    static inline double sks_log_mills_q(double z, const double* table) {
        /* log Q(|z|) from the table */
        double x = z < 0.0 ? -z : z;
        double xc = x < SKS_LOG_MILLS_CAP ? x : SKS_LOG_MILLS_CAP;
        int i = (int)(xc * SKS_LOG_MILLS_PER_UNIT);
        double u = (xc * SKS_LOG_MILLS_PER_UNIT - ((double)i + 0.5)) * 2.0;
        const double* a = table + i * SKS_LOG_MILLS_STRIDE;
        double L = a[SKS_LOG_MILLS_STRIDE - 1];
        for (int j = SKS_LOG_MILLS_STRIDE - 2; j >= 0; j--)
            L = L * u + a[j];
        return (-0.5 * x * x - 0.9189385332046728) + L;
    }

    /* log Phi(z) from q = log Q(|z|) */
    static inline double sks_log_ndtr_from_q(double z, double q) {
        double pos = sks_log1p_unit(-sks_exp_nonpos(q));
        return z < 0.0 ? q : pos;
    }

    static inline double sks_log_ndtr_tab(double z, const double* table) {
        return sks_log_ndtr_from_q(z, sks_log_mills_q(z, table));
    }

    /* Over a row: pass 1, q = log Q(|t - psi[k]|) (the table's
       coefficients gathered: AVX2 intrinsics where the CPU has them, GCC
       does not vectorise gathers); pass 2, log Phi from q (vectorised). */
    #define SKS_LOG_NDTR_PASS2 \
        for (Py_ssize_t k = 0; k < n; k++) \
            lc[k] = sks_log_ndtr_from_q(t - psi[k], lc[k]);

    static void sks_log_ndtr_base(double t, const double* psi, double* lc,
                                  Py_ssize_t n, const double* table) {
        for (Py_ssize_t k = 0; k < n; k++)
            lc[k] = sks_log_mills_q(t - psi[k], table);
        SKS_LOG_NDTR_PASS2
    }
    #ifdef SKS_X86_DISPATCH
    #include <immintrin.h>
    /* sum_j table[b + j] u^j for j = 0..6 on four lanes (Horner, the
       coefficients gathered): a degree-6 piece of the log Phi tables, here
       and in the quadrature's rows (_special_rows.pxd) */
    __attribute__((target("avx2,fma")))
    static inline __m256d sks_poly6_gather(const double* table, __m128i b,
                                           __m256d u) {
        __m256d L = _mm256_i32gather_pd(table + 6, b, 8);
        L = _mm256_fmadd_pd(L, u, _mm256_i32gather_pd(table + 5, b, 8));
        L = _mm256_fmadd_pd(L, u, _mm256_i32gather_pd(table + 4, b, 8));
        L = _mm256_fmadd_pd(L, u, _mm256_i32gather_pd(table + 3, b, 8));
        L = _mm256_fmadd_pd(L, u, _mm256_i32gather_pd(table + 2, b, 8));
        L = _mm256_fmadd_pd(L, u, _mm256_i32gather_pd(table + 1, b, 8));
        return _mm256_fmadd_pd(L, u, _mm256_i32gather_pd(table, b, 8));
    }
    __attribute__((target("avx2,fma")))
    static void sks_log_ndtr_avx2(double t, const double* psi, double* lc,
                                  Py_ssize_t n, const double* table) {
        const __m256d vt = _mm256_set1_pd(t);
        const __m256d sign = _mm256_set1_pd(-0.0);
        const __m256d cap = _mm256_set1_pd(SKS_LOG_MILLS_CAP);
        const __m256d scale = _mm256_set1_pd(SKS_LOG_MILLS_PER_UNIT);
        const __m256d half = _mm256_set1_pd(0.5);
        const __m256d two = _mm256_set1_pd(2.0);
        const __m256d mhalf = _mm256_set1_pd(-0.5);
        const __m256d mlog = _mm256_set1_pd(-0.9189385332046728);
        const __m128i stride = _mm_set1_epi32(SKS_LOG_MILLS_STRIDE);
        Py_ssize_t k = 0;
        for (; k + 4 <= n; k += 4) {
            __m256d z = _mm256_sub_pd(vt, _mm256_loadu_pd(psi + k));
            __m256d x = _mm256_andnot_pd(sign, z);
            /* min_pd returns its second operand for NaN: x = inf -> cap */
            __m256d xs = _mm256_mul_pd(_mm256_min_pd(x, cap), scale);
            __m128i i = _mm256_cvttpd_epi32(xs);
            __m256d u = _mm256_mul_pd(
                _mm256_sub_pd(xs, _mm256_add_pd(_mm256_cvtepi32_pd(i), half)),
                two);
            __m128i b = _mm_mullo_epi32(i, stride);
            __m256d L = sks_poly6_gather(table, b, u);
            __m256d q = _mm256_add_pd(
                _mm256_fmadd_pd(_mm256_mul_pd(mhalf, x), x, mlog), L);
            _mm256_storeu_pd(lc + k, q);
        }
        for (; k < n; k++)
            lc[k] = sks_log_mills_q(t - psi[k], table);
        SKS_LOG_NDTR_PASS2
    }
    #endif

    static void sks_log_sigmoid_row(double t, const double* psi,
                                    double* lc, Py_ssize_t n) {
    #ifdef SKS_X86_DISPATCH
        if (sks_cpu_level() >= 1) {
            sks_log_sigmoid_avx2(t, psi, lc, n);
            return;
        }
    #endif
        sks_log_sigmoid_base(t, psi, lc, n);
    }

    /* lc[k] = log Phi(t - psi[k]) by sks_log_ndtr_tab, for t - psi[k]
       > -64 (every psi[k] <= 0 and t > -64 ensures it). */
    static void sks_log_ndtr_row(double t, const double* psi, double* lc,
                                 Py_ssize_t n, const double* table) {
    #ifdef SKS_X86_DISPATCH
        if (sks_cpu_level() >= 1) {
            sks_log_ndtr_avx2(t, psi, lc, n, table);
            return;
        }
    #endif
        sks_log_ndtr_base(t, psi, lc, n, table);
    }

    static void sks_log_sigmoid_row_e(double t, const double* psi,
                                      const double* ep, const double* en,
                                      double* lc, Py_ssize_t n) {
        double e_t = exp(t), e_mt = exp(-t);
    #ifdef SKS_X86_DISPATCH
        if (sks_cpu_level() >= 1) {
            sks_log_sigmoid_e_avx2(t, e_t, e_mt, psi, ep, en, lc, n);
            return;
        }
    #endif
        sks_log_sigmoid_e_base(t, e_t, e_mt, psi, ep, en, lc, n);
    }

    static void sks_exp_accumulate(const double* v, const double* m,
                                   double* s, Py_ssize_t n) {
    #ifdef SKS_X86_DISPATCH
        if (sks_cpu_level() >= 1) {
            sks_exp_accumulate_avx2(v, m, s, n);
            return;
        }
    #endif
        sks_exp_accumulate_base(v, m, s, n);
    }
    """
    int sks_cpu_level() noexcept nogil
    double sks_exp_nonpos(double x) noexcept nogil
    void sks_exp_shifted(const double* s, double* e, Py_ssize_t n,
                         double m) noexcept nogil
    double sks_row_max(const double* s, Py_ssize_t n) noexcept nogil
    double sks_row_sum(const double* s, Py_ssize_t n) noexcept nogil
    double sks_log1p_unit(double u) noexcept nogil
    void sks_log_sigmoid_row(double t, const double* psi, double* lc,
                             Py_ssize_t n) noexcept nogil
    void sks_exp_accumulate(const double* v, const double* m, double* s,
                            Py_ssize_t n) noexcept nogil
    void sks_log_sigmoid_row_e(double t, const double* psi, const double* ep,
                               const double* en, double* lc,
                               Py_ssize_t n) noexcept nogil
    double sks_log_ndtr_tab(double z, const double* table) noexcept nogil
    void sks_log_ndtr_row(double t, const double* psi, double* lc,
                          Py_ssize_t n, const double* table) noexcept nogil
    enum: SKS_LOG_MILLS_PIECES
    enum: SKS_LOG_MILLS_STRIDE
    enum: SKS_LOG_MILLS_PER_UNIT
