// Dawsn (Dawson's integral), Expint (the exponential integral Ei),
// FresnelCos and FresnelSin (the Fresnel integrals C and S) and Spence
// (the dilogarithm in Cephes' convention, integral from 1 to x of
// log(t) / (1 - t)) on float and double, the dtypes of TensorFlow's CPU
// kernels. Eigen has none of them; each is evaluated here with the
// published rational approximations of S. L. Moshier's Cephes library, in
// the argument's own type (as TensorFlow does, so float results agree with
// its float ones, cancellation included).
//
// Outside the functions' domains, TensorFlow's values: Expint is NaN for
// x < 0 and for inf (exp(x) * (1 / x)), -inf at 0; Spence is NaN for x < 0
// and for inf; the others are odd functions with Dawsn(+-inf) = 0 and
// Fresnel(+-inf) = +-1/2, except that TensorFlow's Dawsn(x) is 1 / (2|x|),
// positive, for x <= -1e9, and so is this one.
// RegisterMathIntegralKernels is called from math_cwise_kernels.cc.
#include <cmath>
#include <cstddef>
#include <limits>

#include "ops/cpu/cwise_functors.h"

namespace weft {
namespace {

// The coefficients, highest power first. A "Q1" table leaves out its
// leading coefficient, which is 1.
// Dawsn: |x| < 3.25 (in x^2), 3.25 to 6.25 and above (in 1 / x^2).
constexpr double kDawsnSmallP[] = {
    1.13681498971755972054e-11, 8.49262267667473811108e-10,
    1.94434204175553054283e-8, 9.53151741254484363489e-7,
    3.07828309874913200438e-6, 3.52513368520288738649e-4,
    -8.50149846724410912031e-4, 4.22618223005546594270e-2,
    -9.17480371773452345351e-2, 9.99999999999999994612e-1,
};
constexpr double kDawsnSmallQ[] = {
    2.40372073066762605484e-11, 1.48864681368493396752e-9,
    5.21265281010541664570e-8, 1.27258478273186970203e-6,
    2.32490249820789513991e-5, 3.25524741826057911661e-4,
    3.48805814657162590916e-3, 2.79448531198828973716e-2,
    1.58874241960120565368e-1, 5.74918629489320327824e-1,
    1.00000000000000000539e0,
};
constexpr double kDawsnMidP[] = {
    5.08955156417900903354e-1, -2.44754418142697847934e-1,
    9.41512335303534411857e-2, -2.18711255142039025206e-2,
    3.66207612329569181322e-3, -4.23209114460388756528e-4,
    3.59641304793896631888e-5, -2.14640351719968974225e-6,
    9.10010780076391431042e-8, -2.40274520828250956942e-9,
    3.59233385440928410398e-11,
};
constexpr double kDawsnMidQ1[] = {
    -6.31839869873368190192e-1, 2.36706788228248691528e-1,
    -5.31806367003223277662e-2, 8.48041718586295374409e-3,
    -9.47996768486665330168e-4, 7.81025592944552338085e-5,
    -4.55875153252442634831e-6, 1.89100358111421846170e-7,
    -4.91324691331920606875e-9, 7.18466403235734541950e-11,
};
constexpr double kDawsnLargeP[] = {
    -5.90592860534773254987e-1, 6.29235242724368800674e-1,
    -1.72858975380388136411e-1, 1.64837047825189632310e-2,
    -4.86827613020462700845e-4,
};
constexpr double kDawsnLargeQ1[] = {
    -2.69820057197544900361e0, 1.73270799045947845857e0,
    -3.93708582281939493482e-1, 3.44278924041233391079e-2,
    -9.73655226040941223894e-4,
};

// Expint: 0 < x < 2 (in x), then x in [2, 4), [4, 8), [8, 16), [16, 32),
// [32, 64) and above (in 1 / x).
constexpr double kEiSeriesP[] = {
    -5.350447357812542947283e0, 2.185049168816613393830e2,
    -4.176572384826693777058e3, 5.541176756393557601232e4,
    -3.313381331178144034309e5, 1.592627163384945414220e6,
};
constexpr double kEiSeriesQ1[] = {
    -5.250547959112862969197e1, 1.259616186786790571525e3,
    -1.756549581973534652631e4, 1.493062117002725991967e5,
    -7.294949239640527645655e5, 1.592627163384945429726e6,
};
constexpr double kEi4P[] = {
    1.981808503259689673238e-2, -1.271645625984917501326e0,
    -2.088160335681228318920e0, 2.755544509187936721172e0,
    -4.409507048701600257171e-1, 4.665623805935891391017e-2,
    -1.545042679673485262580e-3, 7.059980605299617478514e-5,
};
constexpr double kEi4Q1[] = {
    1.476498670914921440652e0, 5.629177174822436244827e-1,
    1.699017897879307263248e-1, 2.291647179034212017463e-2,
    4.450150439728752875043e-3, 1.727439612206521482874e-4,
    3.953167195549672482304e-5,
};
constexpr double kEi8P[] = {
    -1.373215375871208729803e0, -7.084559133740838761406e-1,
    1.580806855547941010501e0, -2.601500427425622944234e-1,
    2.994674694113713763365e-2, -1.038086040188744005513e-3,
    4.371064420753005429514e-5, 2.141783679522602903795e-6,
};
constexpr double kEi8Q1[] = {
    8.585231423622028380768e-1, 4.483285822873995129957e-1,
    7.687932158124475434091e-2, 2.449868241021887685904e-2,
    8.832165941927796567926e-4, 4.590952299511353531215e-4,
    -4.729848351866523044863e-6, 2.665195537390710170105e-6,
};
constexpr double kEi16P[] = {
    -2.106934601691916512584e0, 1.732733869664688041885e0,
    -2.423619178935841904839e-1, 2.322724180937565842585e-2,
    2.372880440493179832059e-4, -8.343219561192552752335e-5,
    1.363408795605250394881e-5, -3.655412321999253963714e-7,
    1.464941733975961318456e-8, 6.176407863710360207074e-10,
};
constexpr double kEi16Q1[] = {
    -2.298062239901678075778e-1, 1.105077041474037862347e-1,
    -1.566542966630792353556e-2, 2.761106850817352773874e-3,
    -2.089148012284048449115e-4, 1.708528938807675304186e-5,
    -4.459311796356686423199e-7, 1.394634930353847498145e-8,
    6.150865933977338354138e-10,
};
constexpr double kEi32P[] = {
    -2.458119367674020323359e-1, -1.483382253322077687183e-1,
    7.248291795735551591813e-2, -1.348315687380940523823e-2,
    1.342775069788636972294e-3, -7.942465637159712264564e-5,
    2.644179518984235952241e-6, -4.239473659313765177195e-8,
};
constexpr double kEi32Q1[] = {
    -1.044225908443871106315e-1, -2.676453128101402655055e-1,
    9.695000254621984627876e-2, -1.601745692712991078208e-2,
    1.496414899205908021882e-3, -8.462452563778485013756e-5,
    2.728938403476726394024e-6, -4.239462431819542051337e-8,
};
constexpr double kEi64P[] = {
    1.212561118105456670844e-1, -5.823133179043894485122e-1,
    2.348887314557016779211e-1, -3.040034318113248237280e-2,
    1.510082146865190661777e-3, -2.523137095499571377122e-5,
};
constexpr double kEi64Q1[] = {
    -1.002252150365854016662e0, 2.928709694872224144953e-1,
    -3.337004338674007801307e-2, 1.560544881127388842819e-3,
    -2.523137093603234562648e-5,
};
constexpr double kEiInfP[] = {
    -7.657847078286127362028e-1, 6.886192415566705051750e-1,
    -2.132598113545206124553e-1, 3.346107552384193813594e-2,
    -3.076541477344756050249e-3, 1.747119316454907477380e-4,
    -6.103711682274170530369e-6, 1.218032765428652199087e-7,
    -1.086076102793290233007e-9,
};
constexpr double kEiInfQ1[] = {
    -1.888802868662308731041e0, 1.066691687211408896850e0,
    -2.751915982306380647738e-1, 3.930852688233823569726e-2,
    -3.414684558602365085394e-3, 1.866844370703555398195e-4,
    -6.345146083130515357861e-6, 1.239754287483206878024e-7,
    -1.086076102793126632978e-9,
};

// Fresnel: S and C for x^2 < 2.5625 (in x^4), and the auxiliary f and g
// above (in 1 / (pi x^2)^2).
constexpr double kFresnelSP[] = {
    -2.99181919401019853726e3, 7.08840045257738576863e5,
    -6.29741486205862506537e7, 2.54890880573376359104e9,
    -4.42979518059697779103e10, 3.18016297876567817986e11,
};
constexpr double kFresnelSQ1[] = {
    2.81376268889994315696e2, 4.55847810806532581675e4,
    5.17343888770096400730e6, 4.19320245898111231129e8,
    2.24411795645340920940e10, 6.07366389490084639049e11,
};
constexpr double kFresnelCP[] = {
    -4.98843114573573548651e-8, 9.50428062829859605134e-6,
    -6.45191435683965050962e-4, 1.88843319396703850064e-2,
    -2.05525900955013891793e-1, 9.99999999999999998822e-1,
};
constexpr double kFresnelCQ[] = {
    3.99982968972495980367e-12, 9.15439215774657478799e-10,
    1.25001862479598821474e-7, 1.22262789024179030997e-5,
    8.68029542941784300606e-4, 4.12142090722199792936e-2,
    1.00000000000000000118e0,
};
constexpr double kFresnelFP[] = {
    4.21543555043677546506e-1, 1.43407919780758885261e-1,
    1.15220955073585758835e-2, 3.45017939782574027900e-4,
    4.63613749287867322088e-6, 3.05568983790257605827e-8,
    1.02304514164907233465e-10, 1.72010743268161828879e-13,
    1.34283276233062758925e-16, 3.76329711269987889006e-20,
};
constexpr double kFresnelFQ1[] = {
    7.51586398353378947175e-1, 1.16888925859191382142e-1,
    6.44051526508858611005e-3, 1.55934409164153020873e-4,
    1.84627567348930545870e-6, 1.12699224763999035261e-8,
    3.60140029589371370404e-11, 5.88754533621578410010e-14,
    4.52001434074129701496e-17, 1.25443237090011264384e-20,
};
constexpr double kFresnelGP[] = {
    5.04442073643383265887e-1, 1.97102833525523411709e-1,
    1.87648584092575249293e-2, 6.84079380915393090172e-4,
    1.15138826111884280931e-5, 9.82852443688422223854e-8,
    4.45344415861750144738e-10, 1.08268041139020870318e-12,
    1.37555460633261799868e-15, 8.36354435630677421531e-19,
    1.86958710162783235106e-22,
};
constexpr double kFresnelGQ1[] = {
    1.47495759925128324529e0, 3.37748989120019970451e-1,
    2.53603741420338795122e-2, 8.14679107184306179049e-4,
    1.27545075667729118702e-5, 1.04314589657571990585e-7,
    4.60680728146520428211e-10, 1.10273215066240270757e-12,
    1.38796531259578871258e-15, 8.39158816283118707363e-19,
    1.86958710162783236342e-22,
};

// Spence: in w = x - 1 after the reductions.
constexpr double kSpenceP[] = {
    4.65128586073990045278e-5, 7.31589045238094711071e-3,
    1.33847639578309018650e-1, 8.79691311754530315341e-1,
    2.71149851196553469920e0, 4.25697156008121755724e0,
    3.29771340985225106936e0, 1.00000000000000000126e0,
};
constexpr double kSpenceQ[] = {
    6.90990488912553276999e-4, 2.54043763932544379113e-2,
    2.82974860602568089943e-1, 1.41172597751831069617e0,
    3.63800533345137075418e0, 5.03278880143316990390e0,
    3.54771340985225096217e0, 9.99999999999999998740e-1,
};

constexpr double kEuler = 0.57721566490153286061;
constexpr double kPiSquaredOver6 = M_PI * M_PI / 6.0;

// c[0] x^(n-1) + c[1] x^(n-2) + ... + c[n-1], by Horner's rule in T.
template <typename T, size_t N>
T Poly(T x, const double (&c)[N]) {
  T s = T(c[0]);
  for (size_t i = 1; i < N; ++i) s = s * x + T(c[i]);
  return s;
}

// x^n + c[0] x^(n-1) + ... + c[n-1]: a polynomial with leading coefficient
// 1 that the table leaves out.
template <typename T, size_t N>
T Poly1(T x, const double (&c)[N]) {
  T s = x + T(c[0]);
  for (size_t i = 1; i < N; ++i) s = s * x + T(c[i]);
  return s;
}

namespace special {

// Dawson's integral exp(-x^2) * integral from 0 to x of exp(t^2), an odd
// function: a rational function of x^2 below 3.25, of 1 / x^2 above.
template <typename T>
T Dawsn(T x) {
  const T sign = x < T(0) ? T(-1) : T(1);
  const T ax = std::abs(x);
  if (ax < T(3.25)) {
    const T x2 = ax * ax;
    return sign * ax * Poly(x2, kDawsnSmallP) / Poly(x2, kDawsnSmallQ);
  }
  const T w = T(1) / (ax * ax);
  if (ax < T(6.25)) {
    const T q = Poly1(w, kDawsnMidQ1) * ax;
    return sign * T(0.5) * (T(1) / ax + w * Poly(w, kDawsnMidP) / q);
  }
  // 1 / (2|x|), inf included. Unsigned, as TensorFlow's: positive for
  // x <= -1e9 too, though the function is odd.
  if (ax >= T(1e9)) return T(0.5) / ax;
  const T q = Poly1(w, kDawsnLargeQ1) * ax;
  return sign * T(0.5) * (T(1) / ax + w * Poly(w, kDawsnLargeP) / q);
}

// Ei(x) = -(principal value of the integral from -x to inf of exp(-t) / t).
// Below 2: Euler's constant + log(x) + x * R(x); above: exp(x) / x times
// 1 + R(1 / x) / x, with one R per interval up to 64 and one beyond.
template <typename T>
T Expint(T x) {
  if (x < T(0)) return std::numeric_limits<T>::quiet_NaN();
  if (x == T(0)) return -std::numeric_limits<T>::infinity();
  if (x < T(2)) {
    return T(kEuler) + std::log(x) +
           x * Poly(x, kEiSeriesP) / Poly1(x, kEiSeriesQ1);
  }
  const T w = T(1) / x;
  T r;
  if (x < T(4)) {
    r = Poly(w, kEi4P) / Poly1(w, kEi4Q1);
  } else if (x < T(8)) {
    r = Poly(w, kEi8P) / Poly1(w, kEi8Q1);
  } else if (x < T(16)) {
    r = Poly(w, kEi16P) / Poly1(w, kEi16Q1);
  } else if (x < T(32)) {
    r = Poly(w, kEi32P) / Poly1(w, kEi32Q1);
  } else if (x < T(64)) {
    r = Poly(w, kEi64P) / Poly1(w, kEi64Q1);
  } else {
    r = Poly(w, kEiInfP) / Poly1(w, kEiInfQ1);
  }
  return std::exp(x) * w * (T(1) + w * r);  // NaN for NaN and inf (inf * 0)
}

// The Fresnel integrals C(x) = integral from 0 to x of cos(pi t^2 / 2) and
// S(x) (sin), both odd. Below x^2 = 2.5625 power-series-like rational
// functions of x^4; above, 1/2 plus the auxiliary functions f and g
// (rational in 1 / (pi x^2)^2) against cos and sin of pi x^2 / 2; beyond
// 36974 the limits 1/2.
template <typename T>
struct CosSin {
  T c, s;
};
template <typename T>
CosSin<T> Fresnel(T x) {
  const T ax = std::abs(x);
  const T x2 = ax * ax;
  CosSin<T> r;
  if (x2 < T(2.5625)) {
    const T t = x2 * x2;
    r.s = ax * x2 * Poly(t, kFresnelSP) / Poly1(t, kFresnelSQ1);
    r.c = ax * Poly(t, kFresnelCP) / Poly(t, kFresnelCQ);
  } else if (ax > T(36974)) {
    r.c = r.s = T(0.5);
  } else {
    const T pix2 = T(M_PI) * x2;
    const T u = T(1) / (pix2 * pix2);
    const T f = T(1) - u * Poly(u, kFresnelFP) / Poly1(u, kFresnelFQ1);
    const T g = (T(1) / pix2) * Poly(u, kFresnelGP) / Poly1(u, kFresnelGQ1);
    const T arg = T(M_PI_2) * x2;
    const T c = std::cos(arg), s = std::sin(arg);
    const T pix = T(M_PI) * ax;
    r.c = T(0.5) + (f * s - g * c) / pix;
    r.s = T(0.5) - (f * c + g * s) / pix;
  }
  if (x < T(0)) {
    r.c = -r.c;
    r.s = -r.s;
  }
  return r;
}

// Spence's function: a rational function of w = x - 1 on [1/2, 3/2], with
// the reflection x -> 1 - x below 1/2 and the inversion x -> 1/x above
// 3/2 (x itself inverted first above 2).
template <typename T>
T Spence(T x) {
  if (x < T(0)) return std::numeric_limits<T>::quiet_NaN();
  if (x == T(1)) return T(0);
  if (x == T(0)) return T(kPiSquaredOver6);
  bool reflect = false, invert = false;
  if (x > T(2)) {
    x = T(1) / x;
    invert = true;
  }
  T w;
  if (x > T(1.5)) {
    w = T(1) / x - T(1);
    invert = true;
  } else if (x < T(0.5)) {
    w = -x;
    reflect = true;
  } else {
    w = x - T(1);
  }
  T y = -w * Poly(w, kSpenceP) / Poly(w, kSpenceQ);
  if (reflect) {
    y = T(kPiSquaredOver6) - std::log(x) * std::log(T(1) - x) - y;
  }
  if (invert) {
    const T z = std::log(x);
    y = T(-0.5) * z * z - y;
  }
  return y;
}

}  // namespace special

WEFT_UNARY_FUNCTOR(Dawsn, 40,
                   x.unaryExpr([](T v) { return special::Dawsn(v); }));
WEFT_UNARY_FUNCTOR(Expint, 60,
                   x.unaryExpr([](T v) { return special::Expint(v); }));
WEFT_UNARY_FUNCTOR(FresnelCos, 80,
                   x.unaryExpr([](T v) { return special::Fresnel(v).c; }));
WEFT_UNARY_FUNCTOR(FresnelSin, 80,
                   x.unaryExpr([](T v) { return special::Fresnel(v).s; }));
WEFT_UNARY_FUNCTOR(Spence, 60,
                   x.unaryExpr([](T v) { return special::Spence(v); }));

template <typename F>
void RegisterFloatDouble(KernelRegistry* r, const char* op) {
  RegisterUnary<F, float>(r, op);
  RegisterUnary<F, double>(r, op);
}

}  // namespace

void RegisterMathIntegralKernels(KernelRegistry* r) {
  RegisterFloatDouble<Dawsn>(r, "Dawsn");
  RegisterFloatDouble<Expint>(r, "Expint");
  RegisterFloatDouble<FresnelCos>(r, "FresnelCos");
  RegisterFloatDouble<FresnelSin>(r, "FresnelSin");
  RegisterFloatDouble<Spence>(r, "Spence");
}

}  // namespace weft
