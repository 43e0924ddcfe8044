// A C++ shared library of the program's own, built with `ampicxx -shared`
// (test/privat/run.sh): a program linked with -privatize loads a copy of it
// per rank, so its global objects are constructed once per rank, on the
// rank's own thread, and hold the rank's values (globals_cxx.cpp checks).
#include <string>

static int constructions; // how often this copy's LibObject constructor ran

struct LibObject {
    int value;
    LibObject() : value(-1) { constructions++; }
};

LibObject lib_object;             // a global object with a constructor
std::string lib_label("unset");   // a global with a non-trivial constructor

int lib_constructions() { return constructions; }
