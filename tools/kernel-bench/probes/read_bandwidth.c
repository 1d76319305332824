// Single-core read bandwidth: sums a buffer of MB megabytes with AVX-512 loads, 8 rounds, then
// the same buffer as two interleaved streams. BENCHMARKS.md's "one core reads 14-16 GB/s" is the
// 1024 MB figure.
//   gcc -O2 -mavx512f -o /tmp/read_bandwidth read_bandwidth.c && /tmp/read_bandwidth 1024
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <immintrin.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  size_t n=(size_t)atoi(argv[1])<<20>>2; float*a=aligned_alloc(64,n*4); for(size_t i=0;i<n;i++)a[i]=i&7;
  for(int r=0;r<8;r++){
    double t=now(); __m512 s0=_mm512_setzero_ps(),s1=s0,s2=s0,s3=s0;
    for(size_t i=0;i<n;i+=64){s0=_mm512_add_ps(s0,_mm512_load_ps(a+i));s1=_mm512_add_ps(s1,_mm512_load_ps(a+i+16));s2=_mm512_add_ps(s2,_mm512_load_ps(a+i+32));s3=_mm512_add_ps(s3,_mm512_load_ps(a+i+48));}
    double d=now()-t; float x=_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0,s1),_mm512_add_ps(s2,s3)));
    printf("read %.1f GB/s (%g)\n", n*4/d/1e9, x);
  }
  // two streams
  for(int r=0;r<3;r++){
    double t=now(); __m512 s0=_mm512_setzero_ps(),s1=s0; size_t h=n/2;
    for(size_t i=0;i<h;i+=32){s0=_mm512_add_ps(s0,_mm512_load_ps(a+i));s1=_mm512_add_ps(s1,_mm512_load_ps(a+h+i)); s0=_mm512_add_ps(s0,_mm512_load_ps(a+i+16));s1=_mm512_add_ps(s1,_mm512_load_ps(a+h+i+16));}
    double d=now()-t; printf("2 streams %.1f GB/s (%g)\n", n*4/d/1e9, _mm512_reduce_add_ps(_mm512_add_ps(s0,s1)));
  }
}
