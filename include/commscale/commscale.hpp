#pragma once
/// @file commscale.hpp
/// @brief Umbrella header of the core library (Boost only): units, hardware catalogs and
/// topology, the collective model, the workload, the parallel plan, the step predictor and
/// capacity planning. The JSON loaders (include/commscale/io/, need nlohmann_json) and the
/// calibration headers (include/commscale/calibrate/, need Eigen) are included separately.

#include "version.hpp"
#include "error.hpp"
#include "units.hpp"
#include "units/format.hpp"
#include "units/parse.hpp"
#include "hardware/link.hpp"
#include "hardware/links.hpp"
#include "hardware/accelerator.hpp"
#include "hardware/accelerators.hpp"
#include "hardware/comm_params.hpp"
#include "hardware/topology.hpp"
#include "hardware/clusters.hpp"
#include "collective/types.hpp"
#include "collective/model.hpp"
#include "workload/transformer.hpp"
#include "workload/models.hpp"
#include "workload/flops.hpp"
#include "workload/memory.hpp"
#include "parallel/pipeline_layout.hpp"
#include "parallel/plan.hpp"
#include "parallel/traffic.hpp"
#include "predict/step.hpp"
#include "predict/scale.hpp"
#include "predict/requirements.hpp"
#include "predict/capacity.hpp"
