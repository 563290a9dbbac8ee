/* A shared library that is not a graphrt plugin. */
int not_a_plugin(void) { return 42; }
