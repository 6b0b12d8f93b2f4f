#pragma once
// Everything an application uses, in one include: <sluice/sluice.h>.
// Each layer's headers can also be included on their own
// (<sluice/ops/ops.h> to trace and compile, <sluice/pipeline/pipeline.h> for
// pipelines, ...); see each for its part. A custom node kind also includes
// <sluice/pipeline/node.h>, which brings in oneTBB's flow graph.

#include <sluice/base/log_settings.h>
#include <sluice/devices/backend.h>
#include <sluice/io/channel.h>
#include <sluice/io/curve.h>
#include <sluice/io/npy.h>
#include <sluice/io/wire.h>
#include <sluice/ops/autodiff.h>
#include <sluice/ops/loops.h>
#include <sluice/ops/nn.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/optimizers.h>
#include <sluice/ops/random.h>
#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/run_log.h>
#include <sluice/pipeline/serving.h>
#include <sluice/pipeline/zmq_nodes.h>
#include <sluice/stream/stream.h>
#include <sluice/stream/to_batched.h>
