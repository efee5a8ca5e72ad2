// spring-fit: secondary motion from analytically integrated zero-restlength springs (Jin et al.
// 2022). `simulate` makes training data (skinned, quasistatic and backward-Euler sequences of a
// soft body around a bone chain), `fit` learns per-vertex ks, kd from it, `apply` adds the
// springs to the quasistatic targets of any animation.

#include "app/tool.hpp"
#include "flesh/flesh_io.hpp"

int main(int argc, char** argv) {
  datadyn::app::Tool tool("spring-fit", "Analytically integrated springs for secondary motion");
  tool.command(
      "simulate", "Simulate a soft body around a bone chain: skinned, quasistatic, dynamic",
      datadyn::flesh::run_simulate,
      datadyn::app::Splits{
          .config_default = "built-in scene", .inputs = false, .output_default = "flesh_train.h5"});
  tool.command("fit", "Fit per-vertex spring stiffness and damping to quasistatic/dynamic pairs",
               datadyn::flesh::run_fit,
               datadyn::app::Splits{
                   .input_help = "Training caches (from simulate, each with the target and truth "
                                 "sequences); one or more, repeatable, required",
                   .output_default = "springs.h5"});
  tool.command(
      "apply", "Add fitted springs to the quasistatic targets of an animation",
      datadyn::flesh::run_apply,
      datadyn::app::Splits{.input_help = "The animation cache and the springs cache (from fit), "
                                         "in either order; exactly two, required",
                           .output_default = "spring_dynamic.h5"});
  return tool.run(argc, argv);
}
