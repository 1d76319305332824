// A C model of the avx512_mmm_f32_32x12 loop over a cold weight, to try prefetch schemes before
// writing them in the kernel's assembly. Arguments: PF (bytes of in-panel prefetch distance, 0
// for none), TILES (column tiles sharing each weight panel: 3 at 32 tokens, 11 at 128), NEXTPF
// (how the next panel is prefetched), MB (weight megabytes, default 96: cold; 1: hot).
// NEXTPF: 0 none; 1 each tile its own slice of the next panel, T1; 2/3/4 the whole next panel in
// every tile, T1/T2/T0; 6/7 every other line of it, T1/T2; 9/10 a burst of prefetches before
// each tile, T2/T1; 11 the first half in every tile, T1; 12/13/14 the first half in even tiles and
// the second in odd ones, T1/T2/T0 (the scheme the kernel uses, with T1).
//   gcc -O3 -march=native -o /tmp/next_panel next_panel.c
//   for s in 0 1 2 3 12 13; do /tmp/next_panel 0 3 $s; done
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <immintrin.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define K 384
static float Bp[3][K*12] __attribute__((aligned(64)));
static __attribute__((noinline)) void tile(const float*a,const float*b,float*c,int pf,const float*next,int nextpf,int j){
  const char*half=(const char*)(a+32*K)+((j&1)?32*K*2:0);
  __m512 acc[24]; for(int i=0;i<24;i++)acc[i]=_mm512_setzero_ps();
  for(int k=0;k<K;k++){
    if(pf) _mm_prefetch((const char*)(a+k*32)+pf,_MM_HINT_T0);
    if(nextpf==2){_mm_prefetch((const char*)(a+k*32+32*K),_MM_HINT_T1);_mm_prefetch((const char*)(a+k*32+32*K)+64,_MM_HINT_T1);}
    if(nextpf==3){_mm_prefetch((const char*)(a+k*32+32*K),_MM_HINT_T2);_mm_prefetch((const char*)(a+k*32+32*K)+64,_MM_HINT_T2);}
    if(nextpf==4){_mm_prefetch((const char*)(a+k*32+32*K),_MM_HINT_T0);_mm_prefetch((const char*)(a+k*32+32*K)+64,_MM_HINT_T0);}
    if(nextpf==11)_mm_prefetch((const char*)(a+32*K)+k*64,_MM_HINT_T1);
    if(nextpf==12)_mm_prefetch(half+k*64,_MM_HINT_T1);
    if(nextpf==13)_mm_prefetch(half+k*64,_MM_HINT_T2);
    if(nextpf==14)_mm_prefetch(half+k*64,_MM_HINT_T0);
    if(nextpf==6 && (k&1)==0){_mm_prefetch((const char*)(a+32*K)+k*128,_MM_HINT_T1);_mm_prefetch((const char*)(a+32*K)+k*128+64,_MM_HINT_T1);}
    if(nextpf==7 && (k&1)==0){_mm_prefetch((const char*)(a+32*K)+k*128,_MM_HINT_T2);_mm_prefetch((const char*)(a+32*K)+k*128+64,_MM_HINT_T2);}
    if(nextpf==1 && (k&1)==0) _mm_prefetch((const char*)(next)+ (k/2)*64*2, _MM_HINT_T1), _mm_prefetch((const char*)(next)+ (k/2)*64*2+64, _MM_HINT_T1);
    __m512 a0=_mm512_load_ps(a+k*32),a1=_mm512_load_ps(a+k*32+16);
    #pragma GCC unroll 12
    for(int j=0;j<12;j++){__m512 bb=_mm512_set1_ps(b[k*12+j]);acc[2*j]=_mm512_fmadd_ps(a0,bb,acc[2*j]);acc[2*j+1]=_mm512_fmadd_ps(a1,bb,acc[2*j+1]);}
  }
  for(int i=0;i<24;i++)_mm512_store_ps(c+16*i,acc[i]);
}
int main(int argc,char**argv){
  int pf=atoi(argv[1]), tiles=atoi(argv[2]), nextpf=atoi(argv[3]); size_t mb=argc>4?atoi(argv[4]):96;
  size_t n=mb<<20>>2; float*a=aligned_alloc(4096,n*4); for(size_t i=0;i<n;i++)a[i]=(i%7)*0.1f;
  for(int i=0;i<3*K*12;i++)((float*)Bp)[i]=0.01f*(i%5);
  float c[384] __attribute__((aligned(64)));
  size_t panel=32*K, panels=n/panel; double best=1e9;
  for(int r=0;r<6;r++){ double t=now();
    for(size_t p=0;p<panels;p++){ const float*ap=a+p*panel; const float*nx=a+((p+1)%panels)*panel;
      for(int j=0;j<tiles;j++){ if(nextpf>=9){ const char*q=(const char*)nx+(size_t)j*panel*4/tiles; for(size_t o=0;o<panel*4/tiles;o+=64) {if(nextpf==9)_mm_prefetch(q+o,_MM_HINT_T2); else _mm_prefetch(q+o,_MM_HINT_T1);}} tile(ap,Bp[j%3],c,pf,nx+ (size_t)j*panel/tiles, nextpf, j);}}
    double d=now()-t; if(d<best)best=d;}
  double fl=2.0*panels*panel*12*tiles; printf("pf=%d tiles=%d nextpf=%d mb=%zu: %.1f GFLOP/s, weight %.1f GB/s\n",pf,tiles,nextpf,mb,fl/best/1e9,panels*panel*4/best/1e9);
}
