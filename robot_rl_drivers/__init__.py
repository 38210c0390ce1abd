"""Hardware drivers behind robot_rl interfaces; imported as robot_rl_drivers."""
