/* A library that the program's library needs (globals_lib.c), built with
 * `ampicc -shared`: privatized with it. */
int lib2_counter;

int lib2_bump(void);
int lib2_bump(void) { return ++lib2_counter; }
