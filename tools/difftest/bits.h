/* The bit patterns of floats, both ways: what the reference interpreter and the tile driver keep
 * values as. Not installed. */
#ifndef OXIDE_DIFFTEST_BITS_H
#define OXIDE_DIFFTEST_BITS_H

#include <stdint.h>
#include <string.h>

static inline float dt_f32(uint64_t b) {
    uint32_t u = (uint32_t)b;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline double dt_f64(uint64_t b) {
    double d;
    memcpy(&d, &b, 8);
    return d;
}
static inline uint32_t dt_b32(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline uint64_t dt_b64(double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

#endif
