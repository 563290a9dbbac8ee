/* TensorFlow's C API names: version, status, buffers and tensors, against
 * TensorFlow's documented values and behaviours. Compiled as C11. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf_test_util.h"

static void test_version_and_enums(void) {
  CHECK(strncmp(TF_Version(), "1.15.0-graphrt.", 15) == 0);
  /* TensorFlow's numbers (tf_status.h, tf_datatype.h). */
  CHECK(TF_OK == 0 && TF_CANCELLED == 1 && TF_INVALID_ARGUMENT == 3 && TF_NOT_FOUND == 5);
  CHECK(TF_FAILED_PRECONDITION == 9 && TF_UNIMPLEMENTED == 12 && TF_DATA_LOSS == 15 && TF_UNAUTHENTICATED == 16);
  CHECK(TF_FLOAT == 1 && TF_INT32 == 3 && TF_STRING == 7 && TF_INT64 == 9 && TF_BOOL == 10);
  CHECK(TF_BFLOAT16 == 14 && TF_HALF == 19 && TF_RESOURCE == 20 && TF_UINT64 == 23 && TF_COMPLEX == TF_COMPLEX64);
  /* TF_Output/TF_Input: a pointer and an int. */
  CHECK(offsetof(TF_Output, index) == sizeof(void*) && offsetof(TF_Input, index) == sizeof(void*));
}

static void test_status(void) {
  TF_Status* s = TF_NewStatus();
  CHECK(TF_GetCode(s) == TF_OK && strcmp(TF_Message(s), "") == 0);
  TF_SetStatus(s, TF_INVALID_ARGUMENT, "bad thing");
  CHECK(TF_GetCode(s) == 3 && strcmp(TF_Message(s), "bad thing") == 0);
  TF_SetStatus(s, TF_OK, "ignored");
  CHECK(TF_GetCode(s) == TF_OK && strcmp(TF_Message(s), "") == 0);
  TF_SetStatus(s, TF_DATA_LOSS, NULL);
  CHECK(TF_GetCode(s) == TF_DATA_LOSS && strcmp(TF_Message(s), "") == 0);
  TF_DeleteStatus(s);
  TF_DeleteStatus(NULL);
}

static int buffer_frees = 0;
static void count_free(void* data, size_t length) {
  CHECK(length == 5);
  ++buffer_frees;
  free(data);
}

static void test_buffers(void) {
  TF_Buffer* empty = TF_NewBuffer();
  CHECK(empty->data == NULL && empty->length == 0 && empty->data_deallocator == NULL);
  TF_DeleteBuffer(empty);

  char src[4] = {'a', 'b', 0, 'c'};
  TF_Buffer* b = TF_NewBufferFromString(src, sizeof src);
  src[0] = 'z'; /* the buffer holds a copy */
  TF_Buffer view = TF_GetBuffer(b);
  CHECK(view.length == 4 && view.data != src && memcmp(view.data, "ab\0c", 4) == 0);
  TF_DeleteBuffer(b);

  /* A caller-filled buffer: its deallocator runs once, on delete. */
  TF_Buffer* mine = TF_NewBuffer();
  char* data = (char*)malloc(5);
  memcpy(data, "hello", 5);
  mine->data = data;
  mine->length = 5;
  mine->data_deallocator = count_free;
  CHECK(buffer_frees == 0);
  TF_DeleteBuffer(mine);
  CHECK(buffer_frees == 1);
  TF_DeleteBuffer(NULL);
}

static int dealloc_calls = 0;
static void* dealloc_last = NULL;
/* Counts and records; the tests free the memory themselves. */
static void count_dealloc(void* data, size_t len, void* arg) {
  CHECK(arg == (void*)&dealloc_calls);
  (void)len;
  ++dealloc_calls;
  dealloc_last = data;
}

static void test_tensors(void) {
  CHECK(TF_DataTypeSize(TF_FLOAT) == 4 && TF_DataTypeSize(TF_DOUBLE) == 8 && TF_DataTypeSize(TF_INT64) == 8);
  CHECK(TF_DataTypeSize(TF_BOOL) == 1 && TF_DataTypeSize(TF_HALF) == 2 && TF_DataTypeSize(TF_COMPLEX128) == 16);
  CHECK(TF_DataTypeSize(TF_STRING) == 0 && TF_DataTypeSize((TF_DataType)99) == 0);

  const int64_t dims[2] = {2, 3};
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, 2, 24);
  CHECK(t != NULL);
  CHECK(TF_TensorType(t) == TF_FLOAT && TF_NumDims(t) == 2 && TF_Dim(t, 0) == 2 && TF_Dim(t, 1) == 3);
  CHECK(TF_Dim(t, 2) == -1 && TF_Dim(t, -1) == -1);
  CHECK(TF_TensorElementCount(t) == 6 && TF_TensorByteSize(t) == 24);
  float* p = (float*)TF_TensorData(t);
  CHECK(p != NULL && ((uintptr_t)p % 64) == 0);
  for (int i = 0; i < 6; ++i) p[i] = (float)i;
  CHECK(tf_float_at(t, 5) == 5.0f);
  TF_DeleteTensor(t);
  TF_Tensor* scalar = TF_AllocateTensor(TF_INT64, NULL, 0, 8);
  CHECK(scalar != NULL && TF_NumDims(scalar) == 0 && TF_TensorElementCount(scalar) == 1);
  TF_DeleteTensor(scalar);
  /* Refused: a wrong len, a negative dim, strings, an unknown dtype. */
  CHECK(TF_AllocateTensor(TF_FLOAT, dims, 2, 23) == NULL);
  const int64_t negative[1] = {-1};
  CHECK(TF_AllocateTensor(TF_FLOAT, negative, 1, 0) == NULL);
  CHECK(TF_AllocateTensor(TF_STRING, dims, 2, 0) == NULL);
  CHECK(TF_AllocateTensor((TF_DataType)99, dims, 2, 24) == NULL);
  CHECK(TF_AllocateTensor(TF_FLOAT, NULL, 1, 4) == NULL);

  /* Zero-copy over aligned memory: the deallocator runs once, on delete. */
  float* mem = (float*)aligned_alloc(64, 64);
  for (int i = 0; i < 6; ++i) mem[i] = 10.0f + (float)i;
  TF_Tensor* adopted = TF_NewTensor(TF_FLOAT, dims, 2, mem, 24, count_dealloc, &dealloc_calls);
  CHECK(adopted != NULL && TF_TensorData(adopted) == mem && TF_TensorByteSize(adopted) == 24);
  CHECK(dealloc_calls == 0);
  TF_DeleteTensor(adopted);
  CHECK(dealloc_calls == 1 && dealloc_last == mem);
  free(mem);

  /* Unaligned memory is copied and handed back at once (TensorFlow too). */
  char* raw = (char*)aligned_alloc(64, 128);
  float* odd = (float*)(raw + 4);
  for (int i = 0; i < 6; ++i) odd[i] = 20.0f + (float)i;
  dealloc_calls = 0;
  TF_Tensor* copied = TF_NewTensor(TF_FLOAT, dims, 2, odd, 24, count_dealloc, &dealloc_calls);
  CHECK(copied != NULL);
  CHECK(dealloc_calls == 1 && dealloc_last == odd);
  free(raw); /* the tensor holds a copy */
  CHECK(TF_TensorData(copied) != (void*)odd && tf_float_at(copied, 5) == 25.0f);
  TF_DeleteTensor(copied);
  CHECK(dealloc_calls == 1);

  /* A refused tensor leaves the memory the caller's: no deallocator call. */
  float* kept = (float*)aligned_alloc(64, 64);
  dealloc_calls = 0;
  CHECK(TF_NewTensor(TF_FLOAT, dims, 2, kept, 20, count_dealloc, &dealloc_calls) == NULL);
  CHECK(TF_NewTensor(TF_STRING, dims, 2, kept, 24, count_dealloc, &dealloc_calls) == NULL);
  CHECK(dealloc_calls == 0);
  /* No deallocator: the caller frees after the tensor is gone. */
  TF_Tensor* borrowed = TF_NewTensor(TF_FLOAT, dims, 2, kept, 24, NULL, NULL);
  CHECK(borrowed != NULL && TF_TensorData(borrowed) == kept);
  TF_DeleteTensor(borrowed);
  free(kept);

  /* Accessors on NULL answer zeros. */
  CHECK(TF_NumDims(NULL) == 0 && TF_TensorData(NULL) == NULL && TF_TensorByteSize(NULL) == 0);
  TF_DeleteTensor(NULL);
}

int main(void) {
  test_version_and_enums();
  test_status();
  test_buffers();
  test_tensors();
  if (c_test_failures() == 0) printf("all TF C API basics checks passed\n");
  return c_test_exit();
}
