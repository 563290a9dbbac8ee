/* A program written against TensorFlow's C API (tensorflow/c/c_api.h),
 * built unchanged against graphrt: its TensorFlow version, then a linear
 * model y = w * x + b fitted by gradient descent with TF_AddGradients,
 * all through TF_* calls.
 *
 *   cc hello_tf.c $(pkg-config --cflags --libs tensorflow) -o hello_tf
 *   (PKG_CONFIG_PATH=<libdir>/graphrt/tensorflow-compat/pkgconfig)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/c_api.h"

static void check(TF_Status* s, const char* what) {
  if (TF_GetCode(s) != TF_OK) {
    fprintf(stderr, "%s: %s\n", what, TF_Message(s));
    exit(1);
  }
}

static TF_Operation* scalar_const(TF_Graph* g, const char* name, float value, TF_Status* s) {
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(float));
  memcpy(TF_TensorData(t), &value, sizeof(float));
  TF_OperationDescription* d = TF_NewOperation(g, "Const", name);
  TF_SetAttrTensor(d, "value", t, s);
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_Operation* op = TF_FinishOperation(d, s);
  TF_DeleteTensor(t);
  check(s, name);
  return op;
}

static TF_Operation* binary(TF_Graph* g, const char* type, const char* name, TF_Output a, TF_Output b,
                            TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, type, name);
  TF_AddInput(d, a);
  TF_AddInput(d, b);
  TF_Operation* op = TF_FinishOperation(d, s);
  check(s, name);
  return op;
}

int main(void) {
  printf("TensorFlow C library version %s\n", TF_Version());
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();

  /* x, y: float[4]; w, b: scalars fed each step (the model's state lives in
   * this program); loss = mean((w * x + b - y)^2). */
  const int64_t four = 4;
  TF_Operation* ph[2];
  const char* names[2] = {"x", "y"};
  for (int i = 0; i < 2; ++i) {
    TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", names[i]);
    TF_SetAttrType(d, "dtype", TF_FLOAT);
    TF_SetAttrShape(d, "shape", &four, 1);
    ph[i] = TF_FinishOperation(d, s);
    check(s, names[i]);
  }
  TF_Operation* w = NULL;
  TF_Operation* b = NULL;
  {
    TF_OperationDescription* d = TF_NewOperation(g, "PlaceholderWithDefault", "w");
    TF_Operation* zero = scalar_const(g, "zero", 0.0f, s);
    TF_AddInput(d, (TF_Output){zero, 0});
    TF_SetAttrShape(d, "shape", NULL, 0);
    w = TF_FinishOperation(d, s);
    check(s, "w");
    d = TF_NewOperation(g, "PlaceholderWithDefault", "b");
    TF_AddInput(d, (TF_Output){zero, 0});
    TF_SetAttrShape(d, "shape", NULL, 0);
    b = TF_FinishOperation(d, s);
    check(s, "b");
  }
  TF_Operation* wx = binary(g, "Mul", "wx", (TF_Output){w, 0}, (TF_Output){ph[0], 0}, s);
  TF_Operation* pred = binary(g, "AddV2", "pred", (TF_Output){wx, 0}, (TF_Output){b, 0}, s);
  TF_Operation* err = binary(g, "Sub", "err", (TF_Output){pred, 0}, (TF_Output){ph[1], 0}, s);
  TF_Operation* sq = binary(g, "Mul", "sq", (TF_Output){err, 0}, (TF_Output){err, 0}, s);
  TF_Operation* axis = NULL;
  {
    int32_t zero_axis = 0;
    TF_Tensor* t = TF_AllocateTensor(TF_INT32, NULL, 0, sizeof(int32_t));
    memcpy(TF_TensorData(t), &zero_axis, sizeof(int32_t));
    TF_OperationDescription* d = TF_NewOperation(g, "Const", "axis");
    TF_SetAttrTensor(d, "value", t, s);
    TF_SetAttrType(d, "dtype", TF_INT32);
    axis = TF_FinishOperation(d, s);
    TF_DeleteTensor(t);
    check(s, "axis");
  }
  TF_Operation* loss = binary(g, "Mean", "loss", (TF_Output){sq, 0}, (TF_Output){axis, 0}, s);

  TF_Output ys[1] = {{loss, 0}};
  TF_Output xs[2] = {{w, 0}, {b, 0}};
  TF_Output grads[2];
  TF_AddGradients(g, ys, 1, xs, 2, NULL, s, grads);
  check(s, "TF_AddGradients");

  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_Session* session = TF_NewSession(g, opts, s);
  check(s, "TF_NewSession");

  /* Data from y = 3x - 1. */
  const float x_data[4] = {0, 1, 2, 3}, y_data[4] = {-1, 2, 5, 8};
  float wv = 0, bv = 0, loss_value = 0;
  for (int step = 0; step < 500; ++step) {
    TF_Tensor* feeds[4] = {TF_AllocateTensor(TF_FLOAT, &four, 1, sizeof(x_data)),
                           TF_AllocateTensor(TF_FLOAT, &four, 1, sizeof(y_data)),
                           TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(float)),
                           TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(float))};
    memcpy(TF_TensorData(feeds[0]), x_data, sizeof(x_data));
    memcpy(TF_TensorData(feeds[1]), y_data, sizeof(y_data));
    memcpy(TF_TensorData(feeds[2]), &wv, sizeof(float));
    memcpy(TF_TensorData(feeds[3]), &bv, sizeof(float));
    TF_Output inputs[4] = {{ph[0], 0}, {ph[1], 0}, {w, 0}, {b, 0}};
    TF_Output fetches[3] = {{loss, 0}, grads[0], grads[1]};
    TF_Tensor* out[3] = {NULL, NULL, NULL};
    TF_SessionRun(session, NULL, inputs, feeds, 4, fetches, out, 3, NULL, 0, NULL, s);
    check(s, "TF_SessionRun");
    loss_value = *(float*)TF_TensorData(out[0]);
    wv -= 0.05f * *(float*)TF_TensorData(out[1]);
    bv -= 0.05f * *(float*)TF_TensorData(out[2]);
    for (int i = 0; i < 4; ++i) TF_DeleteTensor(feeds[i]);
    for (int i = 0; i < 3; ++i) TF_DeleteTensor(out[i]);
  }
  printf("fitted w=%.3f b=%.3f loss=%.6f\n", wv, bv, loss_value);

  TF_CloseSession(session, s);
  TF_DeleteSession(session, s);
  TF_DeleteSessionOptions(opts);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
  return 0;
}
