#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(int argc,char**argv){
  size_t n=argc>1?atol(argv[1]):65536; int it=20000;
  char *src=aligned_alloc(4096,n), *dst=aligned_alloc(4096,n); memset(src,1,n); memset(dst,2,n);
  int p[2]; pipe(p); pid_t c=fork();
  if(!c){ pause(); return 0; }
  struct iovec l={dst,n}, r={src,n};
  for(int i=0;i<1000;i++) process_vm_readv(c,&l,1,&r,1,0);
  double t0=now(); for(int i=0;i<it;i++) process_vm_readv(c,&l,1,&r,1,0); double t1=now();
  for(int i=0;i<1000;i++) memcpy(dst,src,n);
  double t2=now(); for(int i=0;i<it;i++){ memcpy(dst,src,n); __asm__ volatile(""::"r"(dst):"memory"); } double t3=now();
  printf("%zu B: process_vm_readv %.2f us (%.1f GB/s), memcpy %.2f us (%.1f GB/s)\n",n,(t1-t0)/it,n/((t1-t0)/it)/1e3,(t3-t2)/it,n/((t3-t2)/it)/1e3);
  kill(c,9); wait(NULL); return 0; }
