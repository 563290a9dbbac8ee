// Op definitions of the summary family (TensorFlow's signatures, from
// ops/logging_ops.cc): the TF1 summary ops, each of which outputs a scalar
// string holding a serialized Summary. REGISTER_OP only; the kernels are in
// cpu/.
#include <graphrt/sdk/sdk.h>
#include <graphrt/sdk/shape_fns.h>

namespace graphrt {
namespace sdk {
namespace {

namespace sf = shape_fns;

REGISTER_OP("ScalarSummary")
    .Input("tags: string")
    .Input("values: T")
    .Output("summary: string")
    .Attr("T: realnumbertype")
    .SetShapeFn(sf::ScalarShape)
    .Doc("Outputs a Summary with one simple_value per element of values, tagged by the matching element of tags.");

REGISTER_OP("HistogramSummary")
    .Input("tag: string")
    .Input("values: T")
    .Output("summary: string")
    .Attr("T: realnumbertype = DT_FLOAT")
    .SetShapeFn(sf::ScalarShape)
    .Doc("Outputs a Summary with a histogram of values (TensorFlow's default buckets).");

REGISTER_OP("MergeSummary")
    .Input("inputs: N * string")
    .Output("summary: string")
    .Attr("N: int >= 1")
    .SetShapeFn(sf::ScalarShape)
    .Doc("Merges serialized Summary protos into one; a tag may appear only once.");

REGISTER_OP("TensorSummaryV2")
    .Input("tag: string")
    .Input("tensor: T")
    .Input("serialized_summary_metadata: string")
    .Output("summary: string")
    .Attr("T: type")
    .SetShapeFn(sf::ScalarShape)
    .Doc("Outputs a Summary holding a tensor with the given tag and SummaryMetadata.");

REGISTER_OP("TensorSummary")
    .Input("tensor: T")
    .Output("summary: string")
    .Attr("T: type")
    .Attr("description: string = ''")
    .Attr("labels: list(string) = []")
    .Attr("display_name: string = ''")
    .SetShapeFn(sf::ScalarShape)
    .Doc("Outputs a Summary holding a tensor, named by the node (TF1 tf.summary.tensor_summary).");

}  // namespace
}  // namespace sdk
}  // namespace graphrt
