/* SavedModels through the C API: TensorFlow Serving's half_plus_two and
 * counter (tf_testdata README items 2 and 4), signature lookup and runs,
 * and the error paths. Compiled as C11. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "c_test_util.h"

#define HALF_PLUS_TWO "serving/saved_model_half_plus_two_cpu/00000123"
#define COUNTER "serving/saved_model_counter/00000123"

static void check_spec(const GRC_TensorSpec* spec, const char* key, const char* name, GRC_DataType dtype,
                       int num_dims, int64_t dim0, int64_t dim1) {
  CHECK(spec->key != NULL && strcmp(spec->key, key) == 0);
  CHECK(spec->name != NULL && strcmp(spec->name, name) == 0);
  CHECK(spec->dtype == dtype);
  CHECK(spec->num_dims == num_dims);
  if (num_dims >= 1) CHECK(spec->dims != NULL && spec->dims[0] == dim0);
  if (num_dims >= 2) CHECK(spec->dims != NULL && spec->dims[1] == dim1);
}

static void test_half_plus_two(void) {
  REQUIRE_TESTDATA(HALF_PLUS_TWO "/saved_model.pb");
  GRC_Status* s = GRC_NewStatus();
  const char* tags[1] = {"serve"};
  GRC_SavedModel* m = GRC_LoadSavedModel(testdata(HALF_PLUS_TWO), tags, 1, NULL, s);
  CHECK_OK(s);
  if (m == NULL) {
    GRC_DeleteStatus(s);
    return;
  }
  /* The five signatures TF Serving wrote, sorted. */
  const char* keys[5] = {"classify_x_to_y", "regress_x2_to_y3", "regress_x_to_y", "regress_x_to_y2",
                         "serving_default"};
  CHECK(GRC_SavedModelNumSignatures(m) == 5);
  for (int i = 0; i < 5; ++i) {
    const char* k = GRC_SavedModelSignatureKey(m, i);
    CHECK(k != NULL && strcmp(k, keys[i]) == 0);
  }
  CHECK(GRC_SavedModelSignatureKey(m, 5) == NULL);

  const GRC_Signature* sig = GRC_SavedModelSignature(m, "serving_default", s);
  CHECK_OK(s);
  CHECK(strcmp(GRC_SignatureMethodName(sig), "tensorflow/serving/predict") == 0);
  CHECK(GRC_SignatureNumInputs(sig) == 1 && GRC_SignatureNumOutputs(sig) == 1);
  GRC_TensorSpec spec;
  memset(&spec, 0, sizeof spec);
  spec.struct_size = sizeof spec;
  CHECK(GRC_SignatureInput(sig, 0, &spec, s));
  check_spec(&spec, "x", "x:0", GRC_FLOAT, 2, -1, 1);
  CHECK(GRC_SignatureOutput(sig, 0, &spec, s));
  check_spec(&spec, "y", "y:0", GRC_FLOAT, 2, -1, 1);
  CHECK(!GRC_SignatureInput(sig, 1, &spec, s));
  CHECK_ERROR(s, GRC_OUT_OF_RANGE, "index 1");
  /* A string input of unknown rank (the tf.Example signatures). */
  const GRC_Signature* classify = GRC_SavedModelSignature(m, "classify_x_to_y", s);
  CHECK_OK(s);
  CHECK(strcmp(GRC_SignatureMethodName(classify), "tensorflow/serving/classify") == 0);
  CHECK(GRC_SignatureInput(classify, 0, &spec, s));
  check_spec(&spec, "inputs", "tf_example:0", GRC_STRING, -1, 0, 0);
  CHECK(GRC_SignatureOutput(classify, 0, &spec, s));
  check_spec(&spec, "scores", "y:0", GRC_FLOAT, 2, -1, 1);

  /* Run by signature: y = 0.5x + 2 from the restored variables. */
  const int64_t dims[2] = {3, 1};
  const float xs[3] = {1, 2, 5};
  GRC_Tensor* x = float_tensor(dims, 2, xs, 3);
  const char* in_keys[1] = {"x"};
  const char* out_keys[1] = {"y"};
  GRC_Tensor* out = NULL;
  CHECK(GRC_SavedModelRunSignature(m, "serving_default", in_keys, &x, 1, out_keys, &out, 1, s));
  CHECK_OK(s);
  CHECK(GRC_TensorNumDims(out) == 2 && GRC_TensorDim(out, 0) == 3 && GRC_TensorDim(out, 1) == 1);
  CHECK_NEAR(float_at(out, 0), 2.5, 1e-6);
  CHECK_NEAR(float_at(out, 1), 3.0, 1e-6);
  CHECK_NEAR(float_at(out, 2), 4.5, 1e-6);
  GRC_DeleteTensor(out);
  /* y3 = 0.5*x2 + 3 through regress_x2_to_y3 (keys "inputs"/"outputs"). */
  const char* reg_in[1] = {"inputs"};
  const char* reg_out[1] = {"outputs"};
  CHECK(GRC_SavedModelRunSignature(m, "regress_x2_to_y3", reg_in, &x, 1, reg_out, &out, 1, s));
  CHECK_OK(s);
  CHECK_NEAR(float_at(out, 0), 3.5, 1e-6);
  CHECK_NEAR(float_at(out, 2), 5.5, 1e-6);
  GRC_DeleteTensor(out);

  /* The model's session by tensor name: y2 = 0.5x + 3 (a2, c2). */
  GRC_Session* session = GRC_SavedModelSession(m);
  const char* in_names[1] = {"x:0"};
  const char* out_names[2] = {"y:0", "y2:0"};
  GRC_Tensor* outs[2] = {NULL, NULL};
  CHECK(GRC_SessionRun(session, NULL, 0, in_names, &x, 1, out_names, outs, 2, NULL, 0, NULL, s));
  CHECK_OK(s);
  CHECK_NEAR(float_at(outs[0], 1), 3.0, 1e-6);
  CHECK_NEAR(float_at(outs[1], 0), 3.5, 1e-6);
  CHECK_NEAR(float_at(outs[1], 1), 4.0, 1e-6);
  CHECK_NEAR(float_at(outs[1], 2), 5.5, 1e-6);
  GRC_DeleteTensor(outs[0]);
  GRC_DeleteTensor(outs[1]);
  GRC_DeleteSession(session); /* the model's: does nothing */
  CHECK(GRC_SessionRun(session, NULL, 0, in_names, &x, 1, out_names, outs, 1, NULL, 0, NULL, s));
  CHECK_OK(s);
  GRC_DeleteTensor(outs[0]);

  /* Error paths. */
  CHECK(GRC_SavedModelSignature(m, "no_such_signature", s) == NULL);
  CHECK_ERROR(s, GRC_NOT_FOUND, "no_such_signature");
  CHECK(strstr(GRC_Message(s), "serving_default") != NULL); /* lists the keys */
  out = (GRC_Tensor*)x;
  CHECK(!GRC_SavedModelRunSignature(m, "no_such_signature", in_keys, &x, 1, out_keys, &out, 1, s));
  CHECK_ERROR(s, GRC_NOT_FOUND, "no_such_signature");
  CHECK(out == NULL);
  const char* bad_in[1] = {"not_an_input"};
  CHECK(!GRC_SavedModelRunSignature(m, "serving_default", bad_in, &x, 1, out_keys, &out, 1, s));
  CHECK(GRC_GetCode(s) != GRC_OK && strstr(GRC_Message(s), "not_an_input") != NULL);
  const char* bad_out[1] = {"not_an_output"};
  CHECK(!GRC_SavedModelRunSignature(m, "serving_default", in_keys, &x, 1, bad_out, &out, 1, s));
  CHECK(GRC_GetCode(s) != GRC_OK && strstr(GRC_Message(s), "not_an_output") != NULL);
  CHECK(!GRC_SavedModelRunSignature(m, "serving_default", in_keys, &x, 1, NULL, NULL, 0, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "no output keys");
  GRC_DeleteTensor(x);
  GRC_DeleteSavedModel(m);
  GRC_DeleteStatus(s);
}

/* The counter: signatures with DT_FLOAT_REF outputs, run in order. */
static float run_signature(GRC_SavedModel* m, const char* key, GRC_Tensor* delta, GRC_Status* s) {
  const char* in_keys[1] = {"delta"};
  const char* out_keys[1] = {"output"};
  GRC_Tensor* out = NULL;
  GRC_SavedModelRunSignature(m, key, in_keys, &delta, delta ? 1 : 0, out_keys, &out, 1, s);
  CHECK_OK(s);
  const float v = float_at(out, 0);
  GRC_DeleteTensor(out);
  return v;
}

static void test_counter(void) {
  REQUIRE_TESTDATA(COUNTER "/saved_model.pb");
  GRC_Status* s = GRC_NewStatus();
  GRC_SavedModel* m = GRC_LoadSavedModel(testdata(COUNTER), NULL, 0, NULL, s); /* default tags: serve */
  CHECK_OK(s);
  if (m == NULL) {
    GRC_DeleteStatus(s);
    return;
  }
  const GRC_Signature* sig = GRC_SavedModelSignature(m, "incr_counter_by", s);
  CHECK_OK(s);
  GRC_TensorSpec spec;
  memset(&spec, 0, sizeof spec);
  spec.struct_size = sizeof spec;
  CHECK(GRC_SignatureOutput(sig, 0, &spec, s));
  check_spec(&spec, "output", "incr_counter_by_op/AssignAdd:0", GRC_FLOAT_REF, 0, 0, 0);
  CHECK(GRC_SignatureInput(sig, 0, &spec, s));
  check_spec(&spec, "delta", "delta:0", GRC_FLOAT, -1, 0, 0);
  /* An older caller's struct ending at dtype: num_dims and dims untouched. */
  GRC_TensorSpec old;
  memset(&old, 0, sizeof old);
  old.struct_size = GRC_SIZE_THROUGH(GRC_TensorSpec, dtype);
  old.num_dims = 77;
  CHECK(GRC_SignatureInput(sig, 0, &old, s));
  CHECK(old.dtype == GRC_FLOAT && old.num_dims == 77);

  /* Restored counter = 0. */
  CHECK_NEAR(run_signature(m, "get_counter", NULL, s), 0.0, 0);
  CHECK_NEAR(run_signature(m, "incr_counter", NULL, s), 1.0, 0);
  CHECK_NEAR(run_signature(m, "incr_counter", NULL, s), 2.0, 0);
  GRC_Tensor* delta = float_scalar(2.5f);
  CHECK_NEAR(run_signature(m, "incr_counter_by", delta, s), 4.5, 0);
  GRC_DeleteTensor(delta);
  CHECK_NEAR(run_signature(m, "reset_counter", NULL, s), 0.0, 0);
  CHECK_NEAR(run_signature(m, "get_counter", NULL, s), 0.0, 0);
  GRC_DeleteSavedModel(m);
  GRC_DeleteStatus(s);
}

static void test_load_errors(void) {
  REQUIRE_TESTDATA(HALF_PLUS_TWO "/saved_model.pb");
  GRC_Status* s = GRC_NewStatus();
  CHECK(GRC_LoadSavedModel("/nonexistent/saved_model_dir", NULL, 0, NULL, s) == NULL);
  CHECK_ERROR(s, GRC_NOT_FOUND, "/nonexistent/saved_model_dir");
  /* No MetaGraphDef with these tags. */
  const char* tags[1] = {"no_such_tag"};
  CHECK(GRC_LoadSavedModel(testdata(HALF_PLUS_TWO), tags, 1, NULL, s) == NULL);
  CHECK_ERROR(s, GRC_NOT_FOUND, "no_such_tag");
  CHECK(GRC_LoadSavedModel(NULL, NULL, 0, NULL, s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "export_dir is NULL");
  const char* null_tag[1] = {NULL};
  CHECK(GRC_LoadSavedModel(testdata(HALF_PLUS_TWO), null_tag, 1, NULL, s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "tags[0] is NULL");
  GRC_DeleteSavedModel(NULL);
  GRC_DeleteStatus(s);
}

int main(void) {
  test_half_plus_two();
  test_counter();
  test_load_errors();
  if (c_test_failures() == 0) printf("all C API SavedModel checks passed\n");
  return c_test_exit();
}
