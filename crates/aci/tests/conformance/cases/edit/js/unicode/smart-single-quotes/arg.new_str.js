‘use strict’;

// Shopping cart model.