// The FMA ceiling of the avx512_mmm_f32_32x12 inner loop's shape: 24 accumulators, 2 vector
// loads and 12 broadcasts per step. mode 0: no memory operands (register-only peak); mode 1:
// vector loads from a hot buffer, broadcast constants; mode 2: loads and broadcasts from memory,
// as the kernel does.
//   gcc -O3 -march=native -o /tmp/fma_peak fma_peak.c && /tmp/fma_peak
#include <stdio.h>
#include <time.h>
#include <immintrin.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
float buf[4096*16] __attribute__((aligned(64)));
int main(){
  for(int i=0;i<4096*16;i++)buf[i]=0.001f*(i%13);
  for(int mode=0;mode<3;mode++){
  double best=1e9; __m512 acc[24]; for(int i=0;i<24;i++)acc[i]=_mm512_set1_ps(i*0.001f);
  long iters=2000000;
  for(int r=0;r<5;r++){double t=now();
    const float*p=buf;
    for(long it=0;it<iters;it++){
      __m512 a0=_mm512_load_ps(p+((it*32)&65535)),a1=_mm512_load_ps(p+((it*32+16)&65535));
      if(mode==0){ a0=_mm512_set1_ps(1.0001f); a1=a0; }
      #pragma GCC unroll 12
      for(int j=0;j<12;j++){__m512 b= mode==2? _mm512_set1_ps(p[((it*12+j))&65535]) : _mm512_set1_ps(1.0f+j*1e-6f); acc[2*j]=_mm512_fmadd_ps(a0,b,acc[2*j]);acc[2*j+1]=_mm512_fmadd_ps(a1,b,acc[2*j+1]);}
    }
    double d=now()-t; if(d<best)best=d;}
  float s=0; for(int i=0;i<24;i++)s+=_mm512_reduce_add_ps(acc[i]);
  printf("mode %d: %.1f GFLOP/s (%g)\n",mode, iters*24*32.0/best/1e9, s);}
}
