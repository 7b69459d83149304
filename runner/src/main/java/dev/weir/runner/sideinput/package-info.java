/**
 * Side inputs: materialised once per (view, window) and cached until new side-input data arrives
 * ({@link dev.weir.runner.sideinput.SideInputs}).
 */
package dev.weir.runner.sideinput;
