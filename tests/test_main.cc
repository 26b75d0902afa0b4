// The test programs' shared precompiled header has already included doctest's interface; this
// second include adds its implementation and main (hence both macros: the interface part, which
// turns the one into the other, is not read again).
#define DOCTEST_CONFIG_IMPLEMENT
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
