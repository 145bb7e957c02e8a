#include <mpi.h>

#include <string>

#include "jquick/config.hpp"
#include "jquick/detail/sorter.hpp"

namespace jquick {

const char* layer_name(Layer layer) {
  switch (layer) {
    case Layer::rbc: return "rbc";
    case Layer::mpi_create_group: return "mpi_create_group";
    case Layer::mpi_split: return "mpi_split";
  }
  return "?";
}

const char* schedule_name(Schedule schedule) {
  switch (schedule) {
    case Schedule::cascaded: return "cascaded";
    case Schedule::alternating: return "alternating";
  }
  return "?";
}

Layer parse_layer(const std::string& text) {
  if (text == "rbc") return Layer::rbc;
  if (text == "mpi_create_group" || text == "create_group") return Layer::mpi_create_group;
  if (text == "mpi_split" || text == "split") return Layer::mpi_split;
  throw Error("unknown layer '" + text + "' (expected rbc, mpi_create_group or mpi_split)");
}

Schedule parse_schedule(const std::string& text) {
  if (text == "cascaded") return Schedule::cascaded;
  if (text == "alternating") return Schedule::alternating;
  throw Error("unknown schedule '" + text + "' (expected cascaded or alternating)");
}

namespace detail {

void check_datatype(MPI_Datatype type, std::size_t element_size) {
  if (type == MPI_DATATYPE_NULL) throw Error("the MPI datatype is MPI_DATATYPE_NULL");
  int size = 0;
  check_mpi(MPI_Type_size(type, &size), "MPI_Type_size");
  MPI_Aint lb = 0, extent = 0;
  check_mpi(MPI_Type_get_extent(type, &lb, &extent), "MPI_Type_get_extent");
  if (static_cast<std::size_t>(size) != element_size ||
      static_cast<std::size_t>(extent) != element_size || lb != 0) {
    throw Error("the MPI datatype does not describe the element type: MPI_Type_size is " +
                std::to_string(size) + " bytes, extent " + std::to_string(extent) +
                " (lower bound " + std::to_string(lb) + "), but sizeof(T) is " +
                std::to_string(element_size));
  }
}

}  // namespace detail

}  // namespace jquick
