# The A&R quadrature's loops over the classes of a row (_quadrature_fast),
# nogil and vectorised: at one point t, the log-CDF of every class and the
# ratio r = phi / Phi of its integrand, by region of z = t - psi_k.
#
# The quadrature hands the classes in an order where psi_k decreases by
# buckets of 1/8 (``_quadrature_fast``'s row sort), so that at a given t
# the classes with z_k surely below a bound A and surely above a bound B
# are a prefix and a suffix: there the functions below take a cheaper form
# (an asymptotic one that is exact to double precision in that region, or
# one branch of a two-branch formula), between them the general one. Which
# region a class falls in changes only the work done, not the result beyond
# rounding (the forms agree to about 1e-16 at the bounds).
from sksoftmax._shared._special cimport sks_exp_nonpos, sks_log1p_unit

cdef extern from *:
    """
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    #define SKS_ROWS_X86 1
    #define SKS_AVX512 "avx512f,avx512dq,avx512vl,avx2,fma"
    #include <immintrin.h>
    #endif

    /* ---- normal noise: tables of log Phi.
       3 x 1024 pieces of 1/16 (SKS_LOG_MILLS_* of _special.pxd), each a
       polynomial P of degree 6 in u in [-1, 1] (built by _special.pyx's
       log_ndtr_signed_table): pieces i < 1024 the log Mills ratio L(x) of
       sks_log_mills_q at x = -z > 0 (its coefficients, log_mills_table);
       pieces 1024 + i the function G(z) = log(-log Phi(z)) + z^2 / 2 +
       log sqrt(2 pi) at z >= 0; pieces 2048 + i log Phi(z) itself at z >=
       0. With x = |z|:

       signed (SKS_SG_SIGNED): g(z) = -x^2 / 2 - log sqrt(2 pi) + P(u) is
           log Phi(z) for z < 0 and log(-log Phi(z)) for z >= 0, so that
           log Phi(z) is g below 0 and -e^g above, right in relative terms
           in both tails (the root finder's right end needs -log F = sum_k
           -log Phi(z_k) near 1e-17 to many digits): one polynomial and at
           most one exp, no log1p and no division (the tabulated log Phi
           of _special.pxd needs both for z >= 0);
       direct (SKS_SG_DIRECT): log Phi(z) itself, g(z) for z < 0 and P(u)
           of the third part for z >= 0, right to 5e-16 absolutely there
           (what log F and the integrands of the core grid need): one
           polynomial, no exp.

       For z > -64. */
    #define SKS_SG_SIGNED 1024
    #define SKS_SG_DIRECT 2048
    #define SKS_SG_CAP 63.9990234375
    #define SKS_LOG_SQRT_2PI 0.9189385332046728
    /* the normal integrand's ratio is returned times e^-SKS_R_SHIFT, so
       that the exp's argument stays <= 0 (phi / Phi < 64.1 for z > -64) */
    #define SKS_R_SHIFT 5.0
    /* z >= SKS_NORMAL_FAR: log Phi(z) = -Q(z) > -7.7e-24 is dropped from
       log F (at most K 7.7e-24 absolute: below rounding for any K up to
       10^6) and phi / Phi = phi (1 + Q) is phi to 1e-23 */
    #define SKS_NORMAL_FAR 10.0
    /* z >= SKS_NORMAL_UNDER: Q(z) < 1e-347, log Phi(z) is -0.0 (the exp
       of g underflows): the log-CDF alone is exactly 0 there */
    #define SKS_NORMAL_UNDER 40.0

    /* g(z) of the mode SKS_SG_SIGNED or SKS_SG_DIRECT */
    static inline double sks_sg_value(double z, const double* table,
                                      int mode) {
        double x = z < 0.0 ? -z : z;
        double xc = x < SKS_SG_CAP ? x : SKS_SG_CAP;
        double xs = xc * 16.0;
        int i = (int)xs;
        double u = (xs - ((double)i + 0.5)) * 2.0;
        const double* a = table + (i + (z < 0.0 ? 0 : mode)) * 7;
        double L = a[6];
        for (int j = 5; j >= 0; j--)
            L = L * u + a[j];
        if (mode == SKS_SG_DIRECT && !(z < 0.0))
            return L;
        return (-0.5 * x * x - SKS_LOG_SQRT_2PI) + L;
    }

    static void sks_sg_pass_base(double t, const double* psi, double* g,
                                 Py_ssize_t n, const double* table,
                                 int mode) {
        for (Py_ssize_t k = 0; k < n; k++)
            g[k] = sks_sg_value(t - psi[k], table, mode);
    }
    #ifdef SKS_ROWS_X86
    __attribute__((target("avx2,fma")))
    static void sks_sg_pass_avx2(double t, const double* psi, double* g,
                                 Py_ssize_t n, const double* table,
                                 int mode) {
        const __m256d vt = _mm256_set1_pd(t);
        const __m256d sign = _mm256_set1_pd(-0.0);
        const __m256d zero = _mm256_setzero_pd();
        const __m256d cap = _mm256_set1_pd(SKS_SG_CAP);
        const __m256d scale = _mm256_set1_pd(16.0);
        const __m256d half = _mm256_set1_pd(0.5);
        const __m256d two = _mm256_set1_pd(2.0);
        const __m256d upper = _mm256_set1_pd((double)mode);
        /* the Gaussian term kept where z >= 0: all bits (signed) or none */
        const __m256d keep = _mm256_castsi256_pd(_mm256_set1_epi64x(
            mode == SKS_SG_DIRECT ? 0 : -1));
        const __m256d mhalf = _mm256_set1_pd(-0.5);
        const __m256d mlog = _mm256_set1_pd(-SKS_LOG_SQRT_2PI);
        const __m128i stride = _mm_set1_epi32(7);
        Py_ssize_t k = 0;
        for (; k + 4 <= n; k += 4) {
            __m256d z = _mm256_sub_pd(vt, _mm256_loadu_pd(psi + k));
            __m256d x = _mm256_andnot_pd(sign, z);
            /* min_pd returns its second operand for NaN: x = inf -> cap */
            __m256d xs = _mm256_mul_pd(_mm256_min_pd(x, cap), scale);
            __m256d fi = _mm256_round_pd(
                xs, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            __m256d u = _mm256_mul_pd(
                _mm256_sub_pd(xs, _mm256_add_pd(fi, half)), two);
            __m256d neg = _mm256_cmp_pd(z, zero, _CMP_LT_OQ);
            __m256d up = _mm256_andnot_pd(neg, upper);
            __m128i b = _mm_mullo_epi32(
                _mm256_cvttpd_epi32(_mm256_add_pd(fi, up)), stride);
            __m256d L = sks_poly6_gather(table, b, u);
            __m256d gauss = _mm256_and_pd(
                _mm256_fmadd_pd(_mm256_mul_pd(mhalf, x), x, mlog),
                _mm256_or_pd(neg, keep));
            _mm256_storeu_pd(g + k, _mm256_add_pd(gauss, L));
        }
        for (; k < n; k++)
            g[k] = sks_sg_value(t - psi[k], table, mode);
    }
    #endif

    /* The vectorised loops of the normal row (after the table pass):
       LC: log Phi from g where z may have either sign; R: the ratio
       e^-SKS_R_SHIFT phi(z) / Phi(z) = exp(-z^2/2 - log sqrt(2 pi) -
       SKS_R_SHIFT - log Phi(z)), the same expression for both signs;
       RFAR: that ratio where log Phi is dropped (z >= SKS_NORMAL_FAR). */
    #define SKS_NORMAL_LC_BODY \
        for (Py_ssize_t k = a; k < b; k++) { \
            double z = t - psi[k]; \
            double e = sks_exp_nonpos(lc[k]); \
            lc[k] = z < 0.0 ? lc[k] : -e; \
        }
    #define SKS_NORMAL_R_BODY \
        for (Py_ssize_t k = a; k < b; k++) { \
            double z = t - psi[k]; \
            r[k] = sks_exp_nonpos(-0.5 * z * z \
                                  - (SKS_LOG_SQRT_2PI + SKS_R_SHIFT) \
                                  - lc[k]); \
        }
    #define SKS_NORMAL_RFAR_BODY \
        for (Py_ssize_t k = a; k < b; k++) { \
            double z = t - psi[k]; \
            r[k] = sks_exp_nonpos(-0.5 * z * z \
                                  - (SKS_LOG_SQRT_2PI + SKS_R_SHIFT)); \
        }
    #define SKS_ROW_LOOP(NAME, BODY) \
        static void NAME##_base(double t, const double* psi, double* lc, \
                                double* r, Py_ssize_t a, Py_ssize_t b) { \
            BODY \
        }
    #define SKS_ROW_LOOP_AVX2(NAME, BODY) \
        __attribute__((target("avx2,fma"))) \
        static void NAME##_avx2(double t, const double* psi, double* lc, \
                                double* r, Py_ssize_t a, Py_ssize_t b) { \
            BODY \
        } \
        __attribute__((target(SKS_AVX512))) \
        static void NAME##_avx512(double t, const double* psi, \
                                  double* lc, double* r, Py_ssize_t a, \
                                  Py_ssize_t b) { \
            BODY \
        }
    SKS_ROW_LOOP(sks_normal_lc, SKS_NORMAL_LC_BODY)
    SKS_ROW_LOOP(sks_normal_r, SKS_NORMAL_R_BODY)
    SKS_ROW_LOOP(sks_normal_rfar, SKS_NORMAL_RFAR_BODY)
    #ifdef SKS_ROWS_X86
    SKS_ROW_LOOP_AVX2(sks_normal_lc, SKS_NORMAL_LC_BODY)
    SKS_ROW_LOOP_AVX2(sks_normal_r, SKS_NORMAL_R_BODY)
    SKS_ROW_LOOP_AVX2(sks_normal_rfar, SKS_NORMAL_RFAR_BODY)
    #endif

    /* by sks_cpu_level (0: baseline, 1: AVX2 + FMA, 2: also AVX-512):
       the loops without a table are compiled three times, the table pass
       twice (its gathers are no faster 8 wide: measured) */

    #ifdef SKS_ROWS_X86
    #define SKS_DISPATCH(NAME, ...) \
        do { if (avx2 == 2) NAME##_avx512(__VA_ARGS__); \
             else if (avx2) NAME##_avx2(__VA_ARGS__); \
             else NAME##_base(__VA_ARGS__); } while (0)
    #else
    #define SKS_DISPATCH(NAME, ...) NAME##_base(__VA_ARGS__)
    #endif

    /* Normal noise at t, classes in the bucket order with z_k = t - psi_k
       < 0 for k < n_neg and z_k >= SKS_NORMAL_FAR (or, without r,
       SKS_NORMAL_UNDER) for k >= n_far, every z_k > -64:
       lc[k] = log Phi(z_k) for k < n_far (not written beyond: there it is
       dropped, see SKS_NORMAL_FAR and SKS_NORMAL_UNDER).
       Without r (the root finder, the log-space panels): by the signed
       table, right in relative terms. With r (the core grid in linear
       space): by the direct table, right in absolute terms, and r[k] =
       e^-5 phi(z_k) / Phi(z_k) for every k (n_neg is not used). */
    static void sks_normal_row(double t, const double* psi, Py_ssize_t n,
                               Py_ssize_t n_neg, Py_ssize_t n_far,
                               const double* table, double* lc, double* r) {
        int avx2 = sks_cpu_level();
        int mode = r == NULL ? SKS_SG_SIGNED : SKS_SG_DIRECT;
        (void)avx2;
        if (n_far > 0) {
        #ifdef SKS_ROWS_X86
            if (avx2) sks_sg_pass_avx2(t, psi, lc, n_far, table, mode);
            else sks_sg_pass_base(t, psi, lc, n_far, table, mode);
        #else
            sks_sg_pass_base(t, psi, lc, n_far, table, mode);
        #endif
        }
        if (r == NULL) {
            /* below n_neg, g is log Phi already */
            SKS_DISPATCH(sks_normal_lc, t, psi, lc, r, n_neg, n_far);
            return;
        }
        SKS_DISPATCH(sks_normal_r, t, psi, lc, r, 0, n_far);
        SKS_DISPATCH(sks_normal_rfar, t, psi, lc, r, n_far, n);
    }

    /* ---- logistic noise: e = e^-|z| (a product, as in _special.pxd's
       sks_log_sigmoid_row_e: e^t en[k] below 0, e^-t ep[k] above), log
       sigma(z) = min(z, 0) - log1p(e), r = sigma(-z) = e / (1 + e) for z
       >= 0 and 1 / (1 + e) below.
       |z| >= 15 (e <= 3.1e-7): log1p(e) = e (1 - e / 2 + e^2 / 3) to
       e^4 / 4 < 3e-27 and e / (1 + e) = e (1 - e + e^2) to e^3 < 3e-20
       relative, no division; between, one division for both,
       d = 1 / ((1 + e)(2 + e)): e / (2 + e) = e (1 + e) d for the log1p
       series (sks_log1p_series_s of _special.pxd), 1 / (1 + e) = (2 + e)
       d. */
    #define SKS_LOGISTIC_NEAR 15.0
    #define SKS_LOGISTIC_NEG_BODY \
        for (Py_ssize_t k = a; k < b; k++) { \
            double e = e_t * en[k]; \
            lc[k] = (t - psi[k]) - e * (1.0 - e * (0.5 - e / 3.0)); \
            if (r) r[k] = 1.0 - e * (1.0 - e); \
        }
    #define SKS_LOGISTIC_MID_BODY \
        for (Py_ssize_t k = a; k < b; k++) { \
            double z = t - psi[k]; \
            int neg = z < 0.0; \
            double e = neg ? e_t * en[k] : e_mt * ep[k]; \
            double d = 1.0 / ((1.0 + e) * (2.0 + e)); \
            double l1p = sks_log1p_series_s(e * (1.0 + e) * d); \
            lc[k] = (neg ? z : 0.0) - l1p; \
            if (r) r[k] = (neg ? 1.0 : e) * ((2.0 + e) * d); \
        }
    #define SKS_LOGISTIC_POS_BODY \
        for (Py_ssize_t k = a; k < b; k++) { \
            double e = e_mt * ep[k]; \
            lc[k] = -e * (1.0 - e * (0.5 - e / 3.0)); \
            if (r) r[k] = e * (1.0 - e * (1.0 - e)); \
        }
    #define SKS_LOGISTIC_LOOP(NAME, BODY) \
        static void NAME##_base(double t, double e_t, double e_mt, \
                                const double* psi, const double* ep, \
                                const double* en, double* lc, double* r, \
                                Py_ssize_t a, Py_ssize_t b) { \
            BODY \
        }
    #define SKS_LOGISTIC_LOOP_AVX2(NAME, BODY) \
        __attribute__((target("avx2,fma"))) \
        static void NAME##_avx2(double t, double e_t, double e_mt, \
                                const double* psi, const double* ep, \
                                const double* en, double* lc, double* r, \
                                Py_ssize_t a, Py_ssize_t b) { \
            BODY \
        } \
        __attribute__((target(SKS_AVX512))) \
        static void NAME##_avx512(double t, double e_t, double e_mt, \
                                  const double* psi, const double* ep, \
                                  const double* en, double* lc, \
                                  double* r, Py_ssize_t a, Py_ssize_t b) { \
            BODY \
        }
    SKS_LOGISTIC_LOOP(sks_logistic_neg, SKS_LOGISTIC_NEG_BODY)
    SKS_LOGISTIC_LOOP(sks_logistic_mid, SKS_LOGISTIC_MID_BODY)
    SKS_LOGISTIC_LOOP(sks_logistic_pos, SKS_LOGISTIC_POS_BODY)
    #ifdef SKS_ROWS_X86
    SKS_LOGISTIC_LOOP_AVX2(sks_logistic_neg, SKS_LOGISTIC_NEG_BODY)
    SKS_LOGISTIC_LOOP_AVX2(sks_logistic_mid, SKS_LOGISTIC_MID_BODY)
    SKS_LOGISTIC_LOOP_AVX2(sks_logistic_pos, SKS_LOGISTIC_POS_BODY)
    #endif

    /* Logistic noise at t (-700 <= t <= 700), classes in the bucket order
       with z_k <= -15 for k < n_lo and z_k >= 15 for k >= n_hi; ep[k] =
       e^psi_k, en[k] = e^-psi_k (finite where used: psi_k >= -700):
       lc[k] = log sigma(z_k) for every k, and r[k] = sigma(-z_k) if r is
       not NULL. */
    static void sks_logistic_row(double t, const double* psi,
                                 const double* ep, const double* en,
                                 Py_ssize_t n, Py_ssize_t n_lo,
                                 Py_ssize_t n_hi, double* lc, double* r) {
        int avx2 = sks_cpu_level();
        double e_t = exp(t), e_mt = exp(-t);
        (void)avx2;
        SKS_DISPATCH(sks_logistic_neg, t, e_t, e_mt, psi, ep, en, lc, r,
                     0, n_lo);
        SKS_DISPATCH(sks_logistic_mid, t, e_t, e_mt, psi, ep, en, lc, r,
                     n_lo, n_hi);
        SKS_DISPATCH(sks_logistic_pos, t, e_t, e_mt, psi, ep, en, lc, r,
                     n_hi, n);
    }

    /* acc[k] += c r[k] */
    #define SKS_AXPY_BODY \
        for (Py_ssize_t k = 0; k < n; k++) acc[k] += c * r[k];
    static void sks_axpy_base(double c, const double* r, double* acc,
                              Py_ssize_t n) {
        SKS_AXPY_BODY
    }
    #ifdef SKS_ROWS_X86
    __attribute__((target("avx2,fma")))
    static void sks_axpy_avx2(double c, const double* r, double* acc,
                              Py_ssize_t n) {
        SKS_AXPY_BODY
    }
    __attribute__((target(SKS_AVX512)))
    static void sks_axpy_avx512(double c, const double* r, double* acc,
                                Py_ssize_t n) {
        SKS_AXPY_BODY
    }
    #endif
    static void sks_axpy(double c, const double* r, double* acc,
                         Py_ssize_t n) {
        int avx2 = sks_cpu_level();
        (void)avx2;
        SKS_DISPATCH(sks_axpy, c, r, acc, n);
    }
    """
    double SKS_R_SHIFT
    double SKS_NORMAL_FAR
    double SKS_NORMAL_UNDER
    double SKS_LOGISTIC_NEAR
    int SKS_SG_SIGNED
    int SKS_SG_DIRECT
    double sks_sg_value(double z, const double* table, int mode) noexcept nogil
    void sks_normal_row(double t, const double* psi, Py_ssize_t n,
                        Py_ssize_t n_neg, Py_ssize_t n_far,
                        const double* table, double* lc,
                        double* r) noexcept nogil
    void sks_logistic_row(double t, const double* psi, const double* ep,
                          const double* en, Py_ssize_t n, Py_ssize_t n_lo,
                          Py_ssize_t n_hi, double* lc,
                          double* r) noexcept nogil
    void sks_axpy(double c, const double* r, double* acc,
                  Py_ssize_t n) noexcept nogil
