/* The C client API without sessions: version, statuses, tensors, graphs,
 * plugins and devices, with their error paths. Compiled as C11. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_test_util.h"

/* Reads a whole file into a malloc'd buffer (*len bytes); NULL on failure. */
static char* read_file(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return buf;
}

static void test_version_and_status(void) {
  int major = -1, minor = -1;
  GRC_Version(&major, &minor);
  CHECK(major == GRC_API_MAJOR);
  CHECK(minor == GRC_API_MINOR);
  GRC_Version(NULL, NULL); /* allowed */

  GRC_Status* s = GRC_NewStatus();
  CHECK(GRC_GetCode(s) == GRC_OK);
  CHECK(strcmp(GRC_Message(s), "") == 0);
  GRC_SetStatus(s, GRC_NOT_FOUND, "no such thing");
  CHECK(GRC_GetCode(s) == GRC_NOT_FOUND);
  CHECK(strcmp(GRC_Message(s), "no such thing") == 0);
  GRC_SetStatus(s, GRC_OK, "ignored");
  CHECK(GRC_GetCode(s) == GRC_OK && strcmp(GRC_Message(s), "") == 0);
  CHECK(strcmp(GRC_CodeName(GRC_FAILED_PRECONDITION), "FAILED_PRECONDITION") == 0);
  CHECK(strcmp(GRC_CodeName((GRC_Code)42), "UNKNOWN_CODE") == 0);
  CHECK(GRC_GetCode(NULL) == GRC_OK);
  GRC_DeleteStatus(s);
  GRC_DeleteStatus(NULL);
}

static void test_tensors(void) {
  GRC_Status* s = GRC_NewStatus();
  CHECK(GRC_DataTypeSize(GRC_FLOAT) == 4);
  CHECK(GRC_DataTypeSize(GRC_COMPLEX128) == 16);
  CHECK(GRC_DataTypeSize(GRC_BOOL) == 1);
  CHECK(GRC_DataTypeSize(GRC_STRING) == 0);
  CHECK(GRC_DataTypeSize((GRC_DataType)77) == 0);

  const int64_t dims[2] = {2, 3};
  GRC_Tensor* t = GRC_NewAllocatedTensor(GRC_INT64, dims, 2, s);
  CHECK_OK(s);
  CHECK(GRC_TensorType(t) == GRC_INT64);
  CHECK(GRC_TensorNumDims(t) == 2);
  CHECK(GRC_TensorDim(t, 0) == 2 && GRC_TensorDim(t, 1) == 3);
  CHECK(GRC_TensorDim(t, 2) == -1 && GRC_TensorDim(t, -1) == -1);
  CHECK(GRC_TensorElementCount(t) == 6);
  CHECK(GRC_TensorByteSize(t) == 48);
  const int64_t* v = GRC_TensorData(t);
  CHECK(v != NULL);
  int zeros = 1;
  for (int i = 0; v != NULL && i < 6; ++i) zeros &= v[i] == 0;
  CHECK(zeros);
  GRC_DeleteTensor(t);

  /* A scalar; an empty tensor has no data. */
  t = GRC_NewAllocatedTensor(GRC_DOUBLE, NULL, 0, s);
  CHECK_OK(s);
  CHECK(GRC_TensorNumDims(t) == 0 && GRC_TensorElementCount(t) == 1 && GRC_TensorByteSize(t) == 8);
  GRC_DeleteTensor(t);
  const int64_t empty_dims[2] = {0, 4};
  t = GRC_NewAllocatedTensor(GRC_FLOAT, empty_dims, 2, s);
  CHECK_OK(s);
  CHECK(GRC_TensorElementCount(t) == 0 && GRC_TensorByteSize(t) == 0 && GRC_TensorData(t) == NULL);
  GRC_DeleteTensor(t);

  /* Strings: any bytes, NUL included. */
  const char* strs[3] = {"abc", "", "x\0y"};
  const size_t lens[3] = {3, 0, 3};
  const int64_t three = 3;
  t = GRC_NewStringTensor(&three, 1, strs, lens, s);
  CHECK_OK(s);
  CHECK(GRC_TensorType(t) == GRC_STRING);
  CHECK(GRC_TensorData(t) == NULL && GRC_TensorByteSize(t) == 0);
  const char* data = NULL;
  size_t len = 99;
  CHECK(GRC_TensorStringAt(t, 0, &data, &len, s));
  CHECK(len == 3 && memcmp(data, "abc", 3) == 0);
  CHECK(GRC_TensorStringAt(t, 1, &data, &len, s) && len == 0);
  CHECK(GRC_TensorStringAt(t, 2, &data, &len, s));
  CHECK(len == 3 && memcmp(data, "x\0y", 3) == 0);
  CHECK(GRC_TensorSetString(t, 1, "hello", 5, s));
  CHECK(GRC_TensorStringAt(t, 1, &data, &len, s) && len == 5 && memcmp(data, "hello", 5) == 0);
  CHECK(!GRC_TensorStringAt(t, 3, &data, &len, s));
  CHECK_ERROR(s, GRC_OUT_OF_RANGE, "index 3");
  CHECK(!GRC_TensorSetString(t, -1, "a", 1, s));
  CHECK_ERROR(s, GRC_OUT_OF_RANGE, "index -1");
  GRC_DeleteTensor(t);

  /* Error paths: each names what is wrong and returns NULL. */
  float buf[6] = {0};
  t = GRC_NewTensor(GRC_FLOAT, dims, 2, buf, 5 * sizeof(float), NULL, NULL, s);
  CHECK(t == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "len is 20 bytes");
  const int64_t negative[2] = {2, -3};
  CHECK(GRC_NewAllocatedTensor(GRC_FLOAT, negative, 2, s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "GRC_NewAllocatedTensor");
  CHECK(GRC_NewAllocatedTensor((GRC_DataType)99, dims, 2, s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "99");
  CHECK(GRC_NewAllocatedTensor(GRC_FLOAT, NULL, 2, s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "dims is NULL");
  CHECK(GRC_NewTensor(GRC_STRING, &three, 1, buf, 3 * 16, NULL, NULL, s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "GRC_NewStringTensor");
  /* The size rule: more elements than any tensor may have. */
  const int64_t huge[3] = {INT64_C(1) << 30, INT64_C(1) << 30, INT64_C(1) << 30};
  CHECK(GRC_NewAllocatedTensor(GRC_FLOAT, huge, 3, s) == NULL);
  CHECK(GRC_GetCode(s) == GRC_INVALID_ARGUMENT);
  t = GRC_NewAllocatedTensor(GRC_FLOAT, dims, 2, s);
  CHECK(!GRC_TensorStringAt(t, 0, &data, &len, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "not string");
  GRC_DeleteTensor(t);
  GRC_DeleteTensor(NULL);
  GRC_DeleteStatus(s);
}

static void test_graphs(void) {
  REQUIRE_TESTDATA("tf2onnx/models/regression/graphdef/frozen.pb");
  REQUIRE_TESTDATA("tensorflow/graphdef2mlir/const-values.pbtxt");
  GRC_Status* s = GRC_NewStatus();
  /* Binary, from a file and from its bytes: TF's frozen regression graph. */
  const char* frozen = testdata("tf2onnx/models/regression/graphdef/frozen.pb");
  GRC_Graph* g = GRC_NewGraphFromFile(frozen, s);
  CHECK_OK(s);
  int found_x = 0;
  for (int i = 0; i < GRC_GraphNumNodes(g); ++i) {
    if (strcmp(GRC_GraphNodeName(g, i), "X") == 0) found_x = strcmp(GRC_GraphNodeOp(g, i), "Placeholder") == 0;
  }
  CHECK(found_x);
  CHECK(GRC_GraphNodeName(g, GRC_GraphNumNodes(g)) == NULL);
  const int nodes = GRC_GraphNumNodes(g);
  GRC_DeleteGraph(g);

  size_t len = 0;
  char* bytes = read_file(frozen, &len);
  CHECK(bytes != NULL);
  g = GRC_NewGraphFromBinary(bytes, len, s);
  CHECK_OK(s);
  CHECK(GRC_GraphNumNodes(g) == nodes && nodes > 0);
  GRC_DeleteGraph(g);
  /* Bad bytes: a truncated message. */
  g = GRC_NewGraphFromBinary(bytes, len / 2, s);
  CHECK(g == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "not a serialized GraphDef");
  free(bytes);
  const char junk[4] = {(char)0xff, (char)0xff, (char)0xff, (char)0xff};
  CHECK(GRC_NewGraphFromBinary(junk, sizeof junk, s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "GRC_NewGraphFromBinary");

  /* Text: TF's const-values.pbtxt (three Consts). */
  char* text = read_file(testdata("tensorflow/graphdef2mlir/const-values.pbtxt"), &len);
  CHECK(text != NULL);
  g = GRC_NewGraphFromText(text, len, s);
  CHECK_OK(s);
  CHECK(GRC_GraphNumNodes(g) == 3);
  CHECK(g != NULL && strcmp(GRC_GraphNodeOp(g, 0), "Const") == 0);
  GRC_DeleteGraph(g);
  free(text);
  const char* bad_text = "node { name: \"a\" op: ";
  CHECK(GRC_NewGraphFromText(bad_text, strlen(bad_text), s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "GRC_NewGraphFromText");

  CHECK(GRC_NewGraphFromFile("/nonexistent/graph.pb", s) == NULL);
  CHECK_ERROR(s, GRC_NOT_FOUND, "/nonexistent/graph.pb");
  CHECK(GRC_NewGraphFromFile(NULL, s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "path is NULL");
  GRC_DeleteStatus(s);
}

static void test_plugins_and_devices(void) {
  GRC_Status* s = GRC_NewStatus();
  CHECK(GRC_LoadDefaultPlugins(s));
  CHECK_OK(s);
  CHECK(GRC_LoadDefaultPlugins(s)); /* once per process; later calls agree */
  CHECK_OK(s);

  CHECK(!GRC_LoadPlugin("/nonexistent/libnothing.so", s));
  CHECK_ERROR(s, GRC_NOT_FOUND, "/nonexistent/libnothing.so");
  /* A file that is not a shared library. */
  const char* not_plugin = GRAPHRT_SOURCE_DIR "/examples/graphs/mlp.pbtxt";
  CHECK(!GRC_LoadPlugin(not_plugin, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "mlp.pbtxt");
  /* A shared library that is not a plugin: the C API's own. */
  CHECK(!GRC_LoadPlugin(GRAPHRT_C_LIBRARY, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "not a graphrt plugin");
  CHECK(strstr(GRC_Message(s), "libgraphrt_c") != NULL);
  CHECK(!GRC_LoadPlugin(NULL, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "path is NULL");

  GRC_DeviceList* list = GRC_NewDeviceList(s);
  CHECK_OK(s);
  CHECK(GRC_DeviceListCount(list) >= 1);
  GRC_DeviceInfo info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(GRC_DeviceListGet(list, 0, &info, s));
  CHECK(info.type != NULL && strcmp(info.type, "CPU") == 0);
  CHECK(info.name != NULL && strstr(info.name, "device:CPU:0") != NULL);
  CHECK(info.plugin != NULL && info.plugin[0] != '\0');
  CHECK(info.memory_bytes == -1 || info.memory_bytes > 0);
  /* An older caller's smaller struct: fields past its struct_size stay untouched. */
  GRC_DeviceInfo old;
  memset(&old, 0, sizeof old);
  old.struct_size = GRC_SIZE_THROUGH(GRC_DeviceInfo, type);
  old.plugin = "untouched";
  old.memory_bytes = 1234;
  CHECK(GRC_DeviceListGet(list, 0, &old, s));
  CHECK(old.type != NULL && strcmp(old.type, "CPU") == 0);
  CHECK(strcmp(old.plugin, "untouched") == 0 && old.memory_bytes == 1234);
  CHECK(!GRC_DeviceListGet(list, GRC_DeviceListCount(list), &info, s));
  CHECK_ERROR(s, GRC_OUT_OF_RANGE, "index");
  GRC_DeleteDeviceList(list);
  GRC_DeleteStatus(s);
}

int main(void) {
  test_version_and_status();
  test_tensors();
  test_graphs();
  test_plugins_and_devices();
  if (c_test_failures() == 0) printf("all C API basics checks passed\n");
  return c_test_exit();
}
