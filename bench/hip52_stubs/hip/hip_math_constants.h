#pragma once
// Benchmark stand-in (HIP 5.2 has no hip_math_constants.h; HIP >= 6.1 does).
#define HIP_INF_F __int_as_float(0x7f800000)
#define HIP_NAN_F __int_as_float(0x7fffffff)
#define HIP_MIN_DENORM_F __int_as_float(0x00000001)
#define HIP_MAX_NORMAL_F __int_as_float(0x7f7fffff)
#define HIP_NEG_ZERO_F __int_as_float(0x80000000)
#define HIP_ZERO_F 0.0f
#define HIP_ONE_F 1.0f
#define HIP_SQRT_HALF_F 0.707106781f
#define HIP_SQRT_TWO_F 1.414213562f
#define HIP_PI_F 3.141592654f
#define HIP_L2E_F 1.442695041f
#define HIP_LN2_F 0.693147181f
#define HIP_INF __longlong_as_double(0x7ff0000000000000ULL)
#define HIP_NAN __longlong_as_double(0xfff8000000000000ULL)
#define HIP_PI 3.1415926535897931e+0
