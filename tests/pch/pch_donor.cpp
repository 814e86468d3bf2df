// The donor of a precompiled header (tests/CMakeLists.txt): the suites reuse what compiling this makes.
