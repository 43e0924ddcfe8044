/* A global of a static library (test/privat/run.sh archives this file and
 * globals_c links the archive): linked into the program, it is privatized. */
int archive_counter;
int archive_bump(void);
int archive_bump(void) { return ++archive_counter; }
