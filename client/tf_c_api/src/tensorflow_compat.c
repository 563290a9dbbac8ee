/* libtensorflow.so.1 for programs built against TensorFlow's C library: an
 * otherwise empty library whose one dependency is libgraphrt_tf_c, so that
 * a program asking for libtensorflow.so.1 (DT_NEEDED, or dlopen by name)
 * gets graphrt's TF_* functions. Its RUNPATH finds libgraphrt_tf_c two
 * folders up (<libdir>/graphrt/tensorflow-compat -> <libdir>). */
const char graphrt_tensorflow_compat_note[] = "libtensorflow.so.1: TensorFlow's C API on graphrt (libgraphrt_tf_c)";
