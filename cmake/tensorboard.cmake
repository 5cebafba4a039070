# TensorBoard event files (src/train/tensorboard_writer.cpp): the messages of
# src/train/tensorboard_event.proto, compiled by Debian's protoc and linked with its libprotobuf
# (libprotobuf-dev, protobuf-compiler; scripts/setup.sh installs them). LibTorch carries protobuf
# 3.21.12 inside but exports none of its runtime, so the process holds one protobuf runtime: Debian's,
# of the same version.
find_package(Protobuf)
if(NOT Protobuf_FOUND OR NOT Protobuf_PROTOC_EXECUTABLE)
  message(FATAL_ERROR "protobuf not found. Fix: apt-get install libprotobuf-dev protobuf-compiler (bash scripts/setup.sh)")
endif()
set(tensorboard_proto ${CMAKE_CURRENT_LIST_DIR}/../src/train/tensorboard_event.proto)
set(tensorboard_generated ${CMAKE_CURRENT_BINARY_DIR}/generated)
file(MAKE_DIRECTORY ${tensorboard_generated})
add_custom_command(
  OUTPUT ${tensorboard_generated}/tensorboard_event.pb.cc ${tensorboard_generated}/tensorboard_event.pb.h
  COMMAND ${Protobuf_PROTOC_EXECUTABLE} --cpp_out=${tensorboard_generated}
          --proto_path=${CMAKE_CURRENT_LIST_DIR}/../src/train ${tensorboard_proto}
  DEPENDS ${tensorboard_proto}
  COMMENT "protoc tensorboard_event.proto")
target_sources(ffnshape PRIVATE ${tensorboard_generated}/tensorboard_event.pb.cc)
# None of these files includes torch: without the shared precompiled header they build in seconds.
# Debian's protobuf headers are on the default path (/usr/include, which must not be given as -I).
set_source_files_properties(${tensorboard_generated}/tensorboard_event.pb.cc src/train/tensorboard_writer.cpp
  src/common/crc32c.cpp
  PROPERTIES SKIP_PRECOMPILE_HEADERS ON INCLUDE_DIRECTORIES "${tensorboard_generated}")
target_link_libraries(ffnshape PRIVATE ${Protobuf_LIBRARIES})
