template <class T> __device__ T scaled(T v, T f) { return v * f; }
