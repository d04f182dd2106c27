// vec_t: the vector type of vector_width floats (float, float2 or float4) that
// the streaming and row-wise templates load and store. Expects the macro
// vector_width (1, 2 or 4) to be defined.
#pragma once

template <int W> struct VecOf;
template <> struct VecOf<1> { typedef float T; };
template <> struct VecOf<2> { typedef float2 T; };
template <> struct VecOf<4> { typedef float4 T; };
typedef VecOf<vector_width>::T vec_t;
