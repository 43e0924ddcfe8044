#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
/* two processes read each other's n-byte buffer at once (both=1) or one reads while the other idles */
int main(int argc,char**argv){
  size_t n=argc>1?atol(argv[1]):65536; int both=argc>2?atoi(argv[2]):1; int it=20000;
  volatile int *go=mmap(NULL,4096,PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
  volatile unsigned long *addr=(volatile unsigned long*)(go+16); volatile int *pids=go+64;
  pid_t kid[2];
  for(int k=0;k<2;k++){ kid[k]=fork(); if(!kid[k]){
      cpu_set_t s; CPU_ZERO(&s); CPU_SET(k,&s); sched_setaffinity(0,sizeof s,&s);
      char *src=aligned_alloc(4096,n),*dst=aligned_alloc(4096,n); memset(src,k,n); memset(dst,9,n);
      addr[k]=(unsigned long)src; pids[k]=getpid(); __sync_fetch_and_add(go,1);
      while(*go<2); 
      if(k==1 && !both){ sleep(2); return 0; }
      struct iovec l={dst,n}, r={(void*)addr[1-k],n};
      for(int i=0;i<1000;i++) process_vm_readv(pids[1-k],&l,1,&r,1,0);
      double t0=now(); for(int i=0;i<it;i++) process_vm_readv(pids[1-k],&l,1,&r,1,0); double t1=now();
      printf("proc %d (%s): %zu B process_vm_readv %.2f us\n",k,both?"both read":"alone",n,(t1-t0)/it); return 0; } }
  wait(NULL); wait(NULL); return 0; }
