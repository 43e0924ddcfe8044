#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>
static unsigned long long now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000ull+t.tv_nsec;}
int main(int c, char **v){ int pause=atoi(v[1]); unsigned long long end=now()+atoll(v[2])*1000000000ull; volatile int x=0;
 while(now()<end){ for(int i=0;i<32;i++){ if(pause) __builtin_ia32_pause(); else x++; } } return 0; }
