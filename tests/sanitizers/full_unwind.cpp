// Linked into the test programs that drive libbabeltrace2 (the CTF importer),
// only in ASan builds: its plugins are built without frame pointers, so the
// fast unwinder loses the stack of an allocation made inside them, and a leak
// of babeltrace2's own (tests/sanitizers/lsan.supp) shows up with no
// libbabeltrace2 frame to match. The slow unwinder finds it. ASAN_OPTIONS in
// the environment still wins over these defaults.
extern "C" const char* __asan_default_options() { return "fast_unwind_on_malloc=0"; }
