// Precompiled header for the library, tools and tests: torch's headers are most of every build.
#pragma once
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>
